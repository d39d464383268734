/**
 * Questions (`ask` nodes, approvals) over MCP in both protocol eras, against the built CLI: a client
 * that did not declare elicitation is never sent a form, whatever else it declares (MCP Inspector's
 * CLI declares the tasks extension and no elicitation, and used to wait forever on a task's form);
 * it gets the answerable INPUT_REQUIRED result at once, and hatchery_respond finishes the run. A
 * client that declares elicitation still gets the form.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  type ClientOptions,
  StreamableHTTPClientTransport,
  Client as V2Client,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { TEST_STATE } from '../helpers.js';
import { CLI, hatcheryDir, textOf, waitFor, writeHatchery } from './helpers.js';

/** What MCP Inspector's CLI declares in the 2026 era: the tasks extension, no elicitation. */
const INSPECTOR_LIKE = {
  extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': {} },
};
const MODERN = { mode: { pin: '2026-07-28' } } as const;

const go = {
  name: 'go',
  desc: 'runs a step after approval',
  nodes: [
    {
      name: 'Go',
      type: 'tool',
      tool_name: 'echo',
      tool_args: { text: 'went to {{ ctx.input }}' },
      approve: true,
    },
  ],
};

let dir: string;
let http: ChildProcess;
let url: string;
beforeAll(async () => {
  dir = hatcheryDir();
  writeHatchery(dir, 'pick.json', pick);
  writeHatchery(dir, 'go.json', go);
  http = spawn(process.execPath, [CLI, 'serve', '--dir', dir, '--http', '127.0.0.1:0'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HATCHERY_STATE: TEST_STATE },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  http.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  url = await waitFor(() => /listening on (\S+)/.exec(err)?.[1], 15_000, 'the server URL');
});
afterAll(() => {
  http?.kill();
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** The one call a test needs of a client of either SDK. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

const stdioArgs = () => [CLI, 'serve', '--dir', dir];
const stdioEnv = () => ({ HATCHERY_STATE: TEST_STATE });

/** A 2025-era client (SDK v1) over stdio; with `answer`, it declares elicitation and answers forms with it. */
async function legacy(answer?: string): Promise<{ client: AnyClient; asked: string[] }> {
  const asked: string[] = [];
  const client = new V1Client(
    { name: 'legacy', version: '1.0.0' },
    answer ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(String(req.params.message));
      return { action: 'accept', content: { answer } };
    });
  }
  await client.connect(
    new V1Stdio({ command: process.execPath, args: stdioArgs(), env: stdioEnv(), stderr: 'ignore' }),
  );
  closers.push(() => client.close());
  return { client, asked };
}

/** A 2026-era client (SDK v2) over stdio or HTTP, declaring `capabilities`; with `answer`, it takes forms. */
async function modern(
  over: 'stdio' | 'http',
  capabilities: ClientOptions['capabilities'],
  answer?: string,
): Promise<{ client: AnyClient; asked: string[] }> {
  const asked: string[] = [];
  const client = new V2Client(
    { name: 'modern', version: '1.0.0' },
    {
      versionNegotiation: MODERN,
      capabilities: answer ? { ...capabilities, elicitation: { form: {} } } : capabilities,
    },
  );
  if (answer) {
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(String((req.params as { message?: unknown }).message));
      return { action: 'accept', content: { answer } };
    });
  }
  const transport =
    over === 'http'
      ? new StreamableHTTPClientTransport(new URL(url))
      : new V2Stdio({ command: process.execPath, args: stdioArgs(), env: stdioEnv(), stderr: 'ignore' });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe('modern');
  closers.push(() => client.close());
  return { client, asked };
}

/**
 * Calls `name`, which must return, before any answer, the answerable result naming `expected` and
 * the run id (the bug waited forever: the test timeout catches it); answers with hatchery_respond,
 * and returns the run's final text (hatchery_result).
 */
async function answerLater(client: AnyClient, name: string, input: string, expected: RegExp, answer: string) {
  const r = (await client.callTool({ name, arguments: { input } })) as { isError?: boolean };
  expect(r.isError).toBe(true);
  const text = textOf(r);
  expect(text).toMatch(expected);
  const runId = /run id: (\S+)/.exec(text)?.[1];
  expect(text).toContain(`hatchery_respond tool: {"run_id": "${runId}", "answer": "<your answer>"}`);
  const answered = (await client.callTool({
    name: 'hatchery_respond',
    arguments: { run_id: runId, answer },
  })) as {
    isError?: boolean;
  };
  expect(answered.isError, textOf(answered)).toBeFalsy();
  return textOf(
    await client.callTool({ name: 'hatchery_result', arguments: { run_id: runId, wait_seconds: 10 } }),
  );
}

const ASKS = /^INPUT_REQUIRED: node "Pick" asks: Which colour for the shed\?\nchoices: red, blue\nrun id: /;
const APPROVAL = /^INPUT_REQUIRED: node "Go" waits for approval: /;

describe('a client that did not declare elicitation gets no form', () => {
  const cases: [string, () => Promise<{ client: AnyClient }>][] = [
    ['2025-11-25 over stdio', () => legacy()],
    ['2026-07-28 over stdio, declaring tasks (as MCP Inspector)', () => modern('stdio', INSPECTOR_LIKE)],
    ['2026-07-28 over HTTP, declaring tasks (as MCP Inspector)', () => modern('http', INSPECTOR_LIKE)],
    ['2026-07-28 over HTTP, declaring nothing', () => modern('http', {})],
  ];
  it.each(cases)('%s: an ask returns at once, answerable with hatchery_respond', async (_, make) => {
    const { client } = await make();
    expect(await answerLater(client, 'pick', 'the shed', ASKS, 'blue')).toBe('painted blue');
  });

  it.each(cases)('%s: an approval returns at once, answerable with hatchery_respond', async (_, make) => {
    const { client } = await make();
    expect(await answerLater(client, 'go', 'the lake', APPROVAL, 'yes')).toBe('went to the lake');
  });
});

describe('a client that declared elicitation still gets the form', () => {
  it('2025-11-25: elicitation/create during the call', async () => {
    const { client, asked } = await legacy('red');
    expect(textOf(await client.callTool({ name: 'pick', arguments: { input: 'the shed' } }))).toBe(
      'painted red',
    );
    expect(asked).toEqual(['Which colour for the shed?']);
  });

  // With the tasks extension too, the question is the task's form: tasks.test.ts and tasks-cli.test.ts.
  it('2026-07-28: the form as input_required, answered in the retried call', async () => {
    const { client, asked } = await modern('http', {}, 'red');
    expect(textOf(await client.callTool({ name: 'pick', arguments: { input: 'the shed' } }))).toBe(
      'painted red',
    );
    expect(asked).toEqual(['Which colour for the shed?']);
  });
});
