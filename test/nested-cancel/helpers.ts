/**
 * Issue 9, nested runs that stop with their caller: hatcheries whose nested work (a hatch: sub-run,
 * a node: tool, a spawned agent) is a script that writes a marker file late, so a test can check that
 * nothing happens after the call that started it failed. Each caller gets its marker path as input,
 * so one served folder (and one spawned server) serves every test of a file.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { tempDir } from '../helpers.js';
import { writeHatchery } from '../mcp/helpers.js';

/** How long the nested script sleeps before it writes its marker. */
export const LATE_MS = 1000;
/** How long a test waits after the caller failed before it checks that no marker appeared. */
export const AFTER_MS = 1800;

// Writes `<marker>.started` at once (the nested work really runs), then `<marker>` after argv[2] ms.
const WRITE_LATE =
  'const fs=require("fs"),f=process.argv[1];fs.writeFileSync(f+".started","");' +
  'setTimeout(()=>fs.writeFileSync(f,"written after its caller ended"),+process.argv[2])';

// Fails (exit 3) as soon as `<marker>.started` exists, so the sibling fails while the nested script sleeps.
const FAIL_WHEN_STARTED =
  'const fs=require("fs"),f=process.argv[1]+".started",t=Date.now();' +
  'const poll=()=>fs.existsSync(f)||Date.now()-t>5000?process.exit(3):setTimeout(poll,10);poll()';

/** A script node that writes the marker named by `file` (a template) `ms` after it starts. */
export function lateWriter(name: string, file = '{{ ctx.input }}', ms = LATE_MS): Record<string, unknown> {
  return { name, type: 'script', cmd: [process.execPath, '-e', WRITE_LATE, file, String(ms)] };
}

/** A baneling calling `tool` with the run's input (the marker path). */
function caller(tool: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Call', type: 'tool', tool_name: tool, tool_args: { input: '{{ ctx.input }}' }, ...extra };
}

/** The caller of each case, by hatchery (and MCP tool) name. */
export const CASES = {
  /** A baneling's hatch: call times out while the sub-hatchery's script sleeps. */
  timeout: [caller('hatch:sub.json', { timeout_ms: 200 })],
  /** A parallel branch calls hatch:sub.json; its sibling fails once the sub's script has started. */
  sibling: [
    { name: 'Both', type: 'parallel', branches: ['Nested', 'Fail'] },
    { ...caller('hatch:sub.json'), name: 'Nested' },
    { name: 'Fail', type: 'script', cmd: [process.execPath, '-e', FAIL_WHEN_STARTED, '{{ ctx.input }}'] },
  ],
  /** A baneling's node: call times out while the node's script sleeps. */
  nodetool: [caller('node:Slow', { timeout_ms: 200 }), lateWriter('Slow')],
  /** A hatch: call with no timeout of its own: only cancelling the run stops it. */
  cancel: [caller('hatch:sub.json')],
} as const;

/** Writes sub.json (the late writer) and one hatchery per case into `dir`. */
export function writeCases(dir: string): void {
  writeHatchery(dir, 'sub.json', {
    name: 'sub',
    desc: 'writes its marker late',
    nodes: [lateWriter('Write')],
  });
  for (const [name, nodes] of Object.entries(CASES)) {
    writeHatchery(dir, `${name}.json`, { name, desc: `nested cancel case: ${name}`, nodes });
  }
}

/** A marker path in a fresh folder (outside the served one, so the watcher never sees it). */
export function marker(): string {
  return path.join(tempDir('nested-cancel-'), 'marker');
}

/** Resolves once `file` exists (throws after `timeoutMs`). */
export async function appears(file: string, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!existsSync(file)) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${file} did not appear within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Waits AFTER_MS after the caller failed, then checks that the nested work wrote nothing. */
export async function expectNoLateWrite(file: string, failedAt: number): Promise<void> {
  await sleep(Math.max(0, failedAt + AFTER_MS - Date.now()));
  expect(existsSync(file), `${file} was written after its caller had failed`).toBe(false);
}

/** A plain timer wait. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
