/**
 * Helpers of the MCP server tests: hatchery folders, in-memory server/client pairs, the built CLI
 * as a child process, and waiting for events instead of sleeping.
 */
import path from 'node:path';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { HatcheryMcpServer, type HatcheryServerOptions } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest, Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { fixtureJs } from '../fixtures/paths.js';
import { CLI_PATH, echo, REPO_ROOT, TEST_STATE, tempDir, writeHatchery } from '../helpers.js';

/** The built CLI (see test/helpers.ts). */
export const CLI = CLI_PATH;
/** The repository root. */
export const ROOT = REPO_ROOT;
/** The example hatcheries shipped with the package. */
export const EXAMPLES = path.join(ROOT, 'hatchery');

/** Writes a hatchery file: the one helper of test/helpers.ts, where these tests have long found it. */
export { writeHatchery } from '../helpers.js';

/** A one-node baneling hatchery that echoes `prefix` + its input (no model needed). */
export function echoDef(
  name: string,
  prefix = '',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    desc: `echoes its input (${name})`,
    nodes: [echo('Echo', `${prefix}{{ ctx.input }}`)],
    ...extra,
  };
}

/** A one-drone hatchery. */
export function droneDef(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    desc: `asks the model (${name})`,
    nodes: [{ name: 'Ask', usr_prompt: '{{ ctx.input }}' }],
    ...extra,
  };
}

/** A hatchery that drafts with the model, asks whether to ship the draft (yes or no), then says both. */
export const REVIEW_DEF = {
  name: 'review',
  desc: 'drafts, asks, then says',
  nodes: [
    { name: 'Draft', usr_prompt: 'draft about {{ ctx.input }}', save_output: 'd', next: 'Pick' },
    {
      name: 'Pick',
      type: 'ask',
      question: 'Ship "{{ ctx.d }}"?',
      choices: ['yes', 'no'],
      save_output: 'c',
      next: 'Say',
    },
    echo('Say', '{{ ctx.d }}: {{ ctx.c }}'),
  ],
};

/** Polls `check` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const t0 = Date.now();
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Counts list_changed notifications and collects log messages of a client. */
export interface Watch {
  listChanged: number;
  logs: string[];
}

/** Records list_changed notifications and log messages on a client (before connecting). */
export function watchClient(client: Client): Watch {
  const w: Watch = { listChanged: 0, logs: [] };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    w.listChanged++;
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    w.logs.push(String(n.params.data));
  });
  return w;
}

/** An in-memory server on `dir` with fixed providers, and a connected client. */
export async function inMemory(
  dir: string,
  opts: {
    providers?: Partial<Record<'openai' | 'anthropic' | 'sampling', Provider>>;
    env?: Record<string, string>;
    server?: Partial<HatcheryServerOptions>;
    client?: ClientOptions;
    setup?: (client: Client) => void;
    allowRoots?: string[];
  } = {},
): Promise<{ core: HatcheryMcpServer; client: Client; watch: Watch; close: () => Promise<void> }> {
  const runtime = new Runtime({
    providers: opts.providers,
    env: opts.env ?? {},
    allowRoots: opts.allowRoots,
  });
  const core = await HatcheryMcpServer.start({
    dir,
    runtime,
    debounceMs: 30,
    // DEBUG_MCP=1 shows the server's log lines when a test needs explaining.
    log: process.env.DEBUG_MCP ? (l) => console.error(l) : () => {},
    ...opts.server,
  });
  const client = new Client({ name: 'test-client', version: '1.0.0' }, opts.client);
  const watch = watchClient(client);
  opts.setup?.(client);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await core.connect(serverSide);
  await client.connect(clientSide);
  return {
    core,
    client,
    watch,
    close: async () => {
      await client.close();
      await core.close();
      await runtime.close();
    },
  };
}

/** Environment of a CLI child that talks to the fake vendor servers. */
export function fakeEnv(openaiBaseURL: string, anthropicBaseURL: string): Record<string, string> {
  return {
    OPENAI_API_KEY: 'test',
    OPENAI_BASE_URL: openaiBaseURL,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: anthropicBaseURL,
    HATCHERY_MODEL: 'openai:gpt-test',
  };
}

/** The built CLI serving `dir` over stdio, with a connected client; stderr is collected. */
export async function spawnCli(
  dir: string,
  opts: {
    env?: Record<string, string>;
    args?: string[];
    client?: ClientOptions;
    setup?: (c: Client) => void;
  } = {},
): Promise<{
  client: Client;
  watch: Watch;
  stderr: () => string;
  transport: StdioClientTransport;
  close: () => Promise<void>;
}> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, '--dir', dir, ...(opts.args ?? [])],
    cwd: ROOT,
    env: { HATCHERY_STATE: TEST_STATE, ...opts.env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (b) => {
    err += String(b);
  });
  const client = new Client({ name: 'test-client', version: '1.0.0' }, opts.client);
  const watch = watchClient(client);
  opts.setup?.(client);
  await client.connect(transport);
  return { client, watch, transport, stderr: () => err, close: () => client.close() };
}

/** A fresh folder for hatchery files. */
export function hatcheryDir(): string {
  return tempDir('hatchery-mcp-test-');
}

/**
 * The readable text of a tool result: the `output` (or `error`) of the server's JSON result when it
 * has one (src/mcp/results.ts), else the text of its text blocks.
 */
export function textOf(result: unknown): string {
  const c = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  const text = c.map((b) => b.text ?? '').join('');
  try {
    const v = JSON.parse(text) as { output?: unknown; error?: unknown };
    if (typeof v.output === 'string') return v.output;
    if (typeof v.error === 'string') return v.error;
  } catch {
    // Not JSON: a result of another server, or a text result.
  }
  return text;
}

/** The JSON of a tool result's one text block (the server sends the same object as structuredContent). */
export function jsonOf(result: unknown): Record<string, unknown> {
  const c = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  const texts = c.filter((b) => b.type === 'text');
  if (texts.length !== 1) throw new Error(`expected one text block, got ${texts.length}`);
  return JSON.parse(texts[0]!.text ?? '') as Record<string, unknown>;
}

/** A provider whose calls wait until released or aborted; records the calls that saw their abort. */
export function gatedProvider() {
  const started: ChatRequest[] = [];
  const aborted: ChatRequest[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const provider = new ScriptedProvider(async (req) => {
    started.push(req);
    await new Promise<void>((resolve, reject) => {
      req.signal.addEventListener('abort', () => {
        aborted.push(req);
        reject(req.signal.reason);
      });
      gate.then(resolve);
    });
    const last = [...req.messages].reverse().find((x) => x.role === 'user');
    return `done: ${last && last.role === 'user' ? last.content : ''}`;
  });
  return { provider, started, aborted, release: () => release() };
}

/**
 * Writes `relay.json` in `dir`: one baneling calling the echo tool of a downstream MCP server (the v2
 * fixture) that logs the `_meta` trace context of every call it receives to the returned file.
 */
export function writeRelay(dir: string, logDir = tempDir('trace-')): string {
  const log = path.join(logDir, 'seen.jsonl');
  writeHatchery(dir, 'relay.json', {
    name: 'relay',
    desc: 'calls a downstream MCP server',
    mcpServers: {
      down: { command: process.execPath, args: [fixtureJs('mcp-v2-server'), '--trace-log', log] },
    },
    nodes: [
      { name: 'Call', type: 'tool', tool_name: 'mcp:down/echo', tool_args: { text: '{{ ctx.input }}' } },
    ],
  });
  return log;
}
