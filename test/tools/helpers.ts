/**
 * Helpers of the tool-layer tests: hatchery files in temp folders, the command line of the fixture
 * MCP server, and the scripted provider.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Hatchery, LoadOptions } from '../../src/engine/contracts.js';
import { loadHatcheryText } from '../../src/loader/load.js';
import type { ScriptedProvider, ScriptedReply } from '../../src/providers/scripted.js';
import { fixtureJs } from '../fixtures/paths.js';

/** The project's scripted provider, under the name these tests use. */
export { ScriptedProvider as Scripted } from '../../src/providers/scripted.js';

/** One scripted model reply. */
export type Reply = ScriptedReply;

/** A reply asking for one tool call. */
export const callTool = (name: string, args: Record<string, unknown> = {}): Reply => ({
  toolCalls: [{ name, args }],
});

/** The tool messages of the last request: what the model saw of its tool calls. */
export function toolResults(p: ScriptedProvider, call = p.calls.length - 1) {
  return (p.calls[call]?.messages ?? []).filter((m) => m.role === 'tool');
}

/** Writes `def` as `<dir>/<name>` and loads it with loadHatcheryText; throws the ValidationError. */
export function loadIn(dir: string, def: unknown, name = 'main.json', options: LoadOptions = {}): Hatchery {
  const file = path.join(dir, name);
  const text = JSON.stringify(def, null, 2);
  writeFileSync(file, text);
  const res = loadHatcheryText(text, file, options);
  if (!res.ok) throw res.error;
  return res.hatchery;
}

/** The validation problems of `def` written as `<dir>/main.json`. */
export function problemsIn(dir: string, def: unknown, options: LoadOptions = {}): string[] {
  const file = path.join(dir, 'main.json');
  const text = JSON.stringify(def);
  writeFileSync(file, text);
  const res = loadHatcheryText(text, file, options);
  return res.ok ? [] : res.error.problems.map((p) => `${p.path}: ${p.message}`);
}

/** The fixture MCP server (test/fixtures/mcp-echo-server.ts compiled by the global setup). */
export const ECHO_SERVER = fixtureJs('mcp-echo-server');

/** An mcpServers entry starting the fixture server with extra flags. */
export function echoServer(...flags: string[]) {
  return { command: process.execPath, args: [ECHO_SERVER, ...flags] };
}

/** True while a process id is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
