/**
 * Human input on 2026-07-28 connections: missing inputs and `ask` nodes come back as
 * `input_required`; the client answers and retries, and the run resumes from its journal (the
 * nodes before the question are not run again). A client without forms gets the suspended run.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { type HttpHandle, serveHttp } from '../../src/mcp/http.js';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { hatcheryDir, REVIEW_DEF, textOf, writeHatchery } from './helpers.js';

const MODERN = { mode: { pin: '2026-07-28' } } as const;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Form {
  message: string;
  requestedSchema: { properties: Record<string, unknown> };
}

/** A journaled server on `dir` over HTTP, and a 2026 client answering forms with `answer` (if given). */
async function setup(
  dir: string,
  answer?: (form: Form) => { action: string; content?: unknown },
  syncWaitMs?: number,
  env: Record<string, string> = {},
) {
  let modelCalls = 0;
  const model = new ScriptedProvider(async () => `draft ${++modelCalls}`);
  const runtime = new Runtime({
    providers: { openai: model },
    env,
    store: new FileRunStore(tempDir('state-'), { env: {} }),
  });
  const core = await HatcheryMcpServer.start({ dir, runtime, watch: false, log: () => {}, syncWaitMs });
  const http: HttpHandle = await serveHttp(core, { port: 0 });
  const asked: Form[] = [];
  const client = new Client(
    { name: 'modern-forms', version: '1.0.0' },
    {
      versionNegotiation: MODERN,
      capabilities: answer ? { elicitation: { form: {} } } : {},
    },
  );
  if (answer) {
    client.setRequestHandler('elicitation/create', async (req) => {
      const form = req.params as unknown as Form;
      asked.push(form);
      return answer(form) as never;
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  cleanups.push(async () => {
    await client.close();
    await http.close();
    await core.close();
    await runtime.close();
  });
  return { client, core, asked, modelCalls: () => modelCalls };
}

/** A one-node hatchery with a declared input. */
const greet = {
  name: 'greet',
  desc: 'greets',
  inputs: { who: 'Whom to greet?' },
  nodes: [{ name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: 'hello {{ ctx.who }}' } }],
};

describe('input_required on 2026 connections', () => {
  it.each([
    ['with', undefined],
    ['without', 0],
  ])(
    'an ask node asks through input_required and the run resumes with the answer, without re-running the draft (%s --sync-wait)',
    async (_, syncWaitMs) => {
      const dir = hatcheryDir();
      writeHatchery(dir, 'review.json', REVIEW_DEF);
      const { client, asked, modelCalls } = await setup(
        dir,
        () => ({ action: 'accept', content: { answer: 'yes' } }),
        syncWaitMs,
      );
      const r = await client.callTool({ name: 'review', arguments: { input: 'boats' } });
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toBe('draft 1: yes');
      expect(asked).toHaveLength(1);
      expect(asked[0]!.message).toBe('Ship "draft 1"?');
      expect(asked[0]!.requestedSchema.properties).toEqual({
        answer: { type: 'string', title: 'Answer', enum: ['yes', 'no'] },
      });
      expect(modelCalls()).toBe(1);
    },
  );

  it('asks for missing declared inputs the same way, then runs with them', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'greet.json', greet);
    const { client, asked } = await setup(dir, () => ({ action: 'accept', content: { who: 'Ada' } }));
    const r = await client.callTool({ name: 'greet', arguments: { input: 'x' } });
    expect(textOf(r)).toBe('hello Ada');
    expect(Object.keys(asked[0]!.requestedSchema.properties)).toEqual(['who']);
  });

  it('hatchery_start on a 2026 connection names a missing input instead of trying to push a form', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'greet.json', greet);
    const { client, asked } = await setup(dir, () => ({ action: 'accept', content: { who: 'Ada' } }));
    const r = await client.callTool({ name: 'hatchery_start', arguments: { name: 'greet', input: 'x' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/missing input: who \(Whom to greet\?\); pass "who"/);
    expect(asked).toEqual([]);
  });

  it('redacts secrets in the forms it sends: input prompts and questions alike', async () => {
    const secret = 'sk-proj-form-secret-0123456789abcdef';
    const dir = hatcheryDir();
    writeHatchery(dir, 'leaky.json', {
      name: 'leaky',
      desc: 'asks with a key in its texts',
      inputs: { who: `Whom to greet? (the key is ${secret})` },
      nodes: [
        {
          name: 'Pick',
          type: 'ask',
          question: `Use ${secret} for {{ ctx.who }}?`,
          choices: ['yes', 'no'],
          save_output: 'c',
          next: 'Say',
        },
        { name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.who }}: {{ ctx.c }}' } },
      ],
    });
    const { client, asked } = await setup(
      dir,
      (form) =>
        'who' in form.requestedSchema.properties
          ? { action: 'accept', content: { who: 'Ada' } }
          : { action: 'accept', content: { answer: 'yes' } },
      undefined,
      { OPENAI_API_KEY: secret },
    );
    const r = await client.callTool({ name: 'leaky', arguments: { input: 'x' } });
    expect(textOf(r)).toBe('Ada: yes');
    expect(asked).toHaveLength(2);
    expect(JSON.stringify(asked)).not.toContain(secret);
    expect(JSON.stringify(asked)).toContain('[redacted]');
  });

  it('a declined question leaves the run waiting and says how to answer it later', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'review.json', REVIEW_DEF);
    const { client } = await setup(dir, () => ({ action: 'decline' }));
    const r = await client.callTool({ name: 'review', arguments: { input: 'cars' } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/declined the question[\s\S]*still waits: hatchery_respond answers it/);
  });

  it('a client without forms gets the suspended run: the question, the run id and hatchery_respond', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'review.json', REVIEW_DEF);
    const { client } = await setup(dir);
    const r = await client.callTool({ name: 'review', arguments: { input: 'trains' } });
    expect(r.isError).toBe(true);
    const text = textOf(r);
    expect(text).toMatch(/^INPUT_REQUIRED: node "Pick" asks: Ship "draft 1"\?/);
    const runId = /run id: (\S+)/.exec(text)![1]!;
    const answered = await client.callTool({
      name: 'hatchery_respond',
      arguments: { run_id: runId, answer: 'no' },
    });
    expect(answered.isError).toBeFalsy();
    const result = await client.callTool({
      name: 'hatchery_result',
      arguments: { run_id: runId, wait_seconds: 10 },
    });
    expect(textOf(result)).toBe('draft 1: no');
  });
});

describe('a forged request state', () => {
  /** One raw 2026 tools/call retry, as a hostile client would send it. */
  async function retry(url: string, name: string, requestState: string) {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name,
          arguments: { input: 'x' },
          requestState,
          inputResponses: { answer: { action: 'accept', content: { answer: 'yes' } } },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'hostile', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      }),
    });
    const text = await res.text();
    const line = text.split('\n').find((l) => l.startsWith('data: ')) ?? text;
    return JSON.parse(line.replace(/^data: /, '')) as { result?: { isError?: boolean; content?: unknown } };
  }

  it('is refused: not a run id, an unknown run, a run of another hatchery, a run not waiting', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'review.json', REVIEW_DEF);
    writeHatchery(dir, 'other.json', { ...REVIEW_DEF, name: 'other' });
    const { client, core } = await setup(dir);
    const http = await serveHttp(core, { port: 0 });
    cleanups.push(() => http.close());
    const waiting = await client.callTool({ name: 'review', arguments: { input: 'a' } });
    const runId = /run id: (\S+)/.exec(textOf(waiting))![1]!;
    const cases: [string, string, RegExp][] = [
      ['review', '../../etc/passwd', /not a run id of this server/],
      ['review', '00000000-0000-4000-8000-000000000000', /unknown run id/],
      ['other', runId, /is a run of review, not of other/],
    ];
    for (const [name, state, message] of cases) {
      const r = await retry(http.url, name, state);
      expect(r.result?.isError).toBe(true);
      expect(textOf(r.result)).toMatch(message);
    }
    // The real run is untouched by all of that, and still answerable.
    const ok = await retry(http.url, 'review', runId);
    expect(textOf(ok.result)).toBe('draft 1: yes');
    const again = await retry(http.url, 'review', runId);
    expect(textOf(again.result)).toMatch(/is succeeded, not waiting for an answer/);
  });
});
