/**
 * Issue 13, results: every tool result carries one JSON object twice, as structuredContent (what
 * Claude Code reads) and as its only text block (what Claude Desktop reads), redacted and capped the
 * same; an output above the inline limit becomes a summary plus a resource_link to a resource kept
 * for a configurable time. Real SDK client and server, in memory and over stdio.
 */
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { secretRedactor } from '../../src/core/secrets.js';
import { OutboundGuard } from '../../src/mcp/outbound.js';
import { OutputStore } from '../../src/mcp/outputs.js';
import { jsonResult } from '../../src/mcp/results.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { runCli, TEST_STATE } from '../helpers.js';
import {
  CLI,
  droneDef,
  echoDef,
  hatcheryDir,
  inMemory,
  jsonOf,
  spawnCli,
  waitFor,
  writeHatchery,
} from './helpers.js';

const SECRET = 'sk-live-results-0123456789abcdef';
const UUID = /^[0-9a-f-]{36}$/;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** One text block, and its JSON is the structured content: the rule of every result. */
function expectOneJson(r: unknown): Record<string, unknown> {
  const result = r as CallToolResult;
  expect(result.content.filter((b) => b.type === 'text')).toHaveLength(1);
  const json = jsonOf(result);
  if (result.structuredContent !== undefined) expect(json).toEqual(result.structuredContent);
  return json;
}

async function serve(dir: string, server: Record<string, unknown> = {}) {
  const s = await inMemory(dir, {
    providers: { openai: new ScriptedProvider(['{"city":"Oslo","population":709000}']) },
    server: { watch: false, secrets: [SECRET], ...server },
  });
  cleanups.push(s.close);
  return s;
}

function folder(): string {
  const dir = hatcheryDir();
  writeHatchery(dir, 'hello.json', echoDef('hello', 'hi '));
  writeHatchery(dir, 'needs.json', { ...echoDef('needs'), inputs: { topic: 'What about?' } });
  writeHatchery(dir, 'city.json', {
    name: 'city_facts',
    desc: 'Facts about a city',
    nodes: [
      {
        name: 'Facts',
        usr_prompt: '{{ ctx.input }}',
        output_schema: {
          type: 'object',
          properties: { city: { type: 'string' }, population: { type: 'number' } },
          required: ['city', 'population'],
        },
      },
    ],
  });
  return dir;
}

async function readText(client: Client, uri: string): Promise<string> {
  const r = await client.readResource({ uri });
  return (r.contents[0] as { text: string }).text;
}

describe('one JSON object in structuredContent and in the text block', () => {
  it('a run that ended well: { output, run_id }, usage after model calls', async () => {
    const { client } = await serve(folder());
    const r = await client.callTool({ name: 'hello', arguments: { input: 'Ada' } });
    const json = expectOneJson(r);
    expect(json).toEqual({ output: 'hi Ada', run_id: expect.stringMatching(UUID) });
    expect(r._meta?.['hatchery/usage']).toMatchObject({ input_tokens: 0, output_tokens: 0 });
    const dir = hatcheryDir();
    writeHatchery(dir, 'ask.json', droneDef('ask'));
    const s = await inMemory(dir, { providers: { openai: new ScriptedProvider(['an answer']) } });
    cleanups.push(s.close);
    const askedResult = await s.client.callTool({ name: 'ask', arguments: { input: 'q' } });
    const asked = expectOneJson(askedResult);
    expect(asked).toMatchObject({ output: 'an answer', usage: { input_tokens: 1, output_tokens: 1 } });
    // The same tokens and cost in the result's usage and in its _meta.
    expect(askedResult._meta?.['hatchery/usage']).toEqual(asked.usage);
  });

  it('a failure: { error, code } with isError, in both copies', async () => {
    const { client } = await serve(folder());
    const r = await client.callTool({ name: 'needs', arguments: { input: 'x' } });
    expect(r.isError).toBe(true);
    const json = expectOneJson(r);
    expect(json).toMatchObject({
      code: 'MISSING_INPUT',
      error: expect.stringMatching(/missing input: topic/),
    });
    const unknown = await client.callTool({ name: 'helo', arguments: {} });
    expect(expectOneJson(unknown)).toEqual({
      error: 'unknown tool "helo"; did you mean "hello"?',
      code: 'NOT_FOUND',
    });
  });

  it('a tool with an outputSchema: the object itself, and its errors as JSON text only', async () => {
    const { client } = await serve(folder());
    // The SDK client checks structuredContent against the declared schema: a wrong one would throw.
    await client.listTools();
    const r = await client.callTool({ name: 'city_facts', arguments: { input: 'Oslo' } });
    expect(expectOneJson(r)).toEqual({ city: 'Oslo', population: 709000 });
    expect(r._meta?.['hatchery/usage']).toMatchObject({ input_tokens: 1 });
    // The scripted model has no second reply: the run fails.
    const failed = (await client.callTool({
      name: 'city_facts',
      arguments: { input: 'Rome' },
    })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toBeUndefined();
    expect(jsonOf(failed)).toMatchObject({ code: expect.any(String), error: expect.any(String) });
  });

  it('every generic tool answers in the same shape, with next_step where there is one', async () => {
    const { client } = await serve(folder());
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      expectOneJson(await client.callTool({ name, arguments: args }));
    expect(await call('hatchery_list')).toMatchObject({ hatcheries: expect.any(Array) });
    const started = await call('hatchery_start', { name: 'hello', input: 'Bo' });
    expect(started).toEqual({
      run_id: expect.stringMatching(UUID),
      hatchery: 'hello',
      state: expect.any(String),
      next_step: 'call hatchery_result with this run_id to wait for the result',
    });
    const result = await call('hatchery_result', { run_id: started.run_id });
    expect(result).toEqual({ output: 'hi Bo', run_id: started.run_id });
    expect(await call('hatchery_status', { run_id: started.run_id })).toMatchObject({ state: 'succeeded' });
    expect(await call('hatchery_cancel', { run_id: started.run_id })).toMatchObject({
      note: 'already finished (succeeded)',
    });
    expect(await call('hatchery_runs')).toMatchObject({ runs: expect.any(Array) });
    expect(await call('hatchery_status', { run_id: '../../etc/passwd' })).toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('a secret is redacted in both copies, keys and nested values too', async () => {
    const { client } = await serve(folder());
    const r = await client.callTool({ name: 'hello', arguments: { input: `key ${SECRET}` } });
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(expectOneJson(r).output).toBe('hi key [redacted]');
    const failed = await client.callTool({ name: 'hatchery_run', arguments: { name: SECRET } });
    expect(JSON.stringify(failed)).not.toContain(SECRET);
    expect(expectOneJson(failed).code).toBe('NOT_FOUND');
  });
});

describe('outputs above the inline limit', () => {
  it('become a summary and a resource_link; reading the resource gives the whole output', async () => {
    const { client } = await serve(folder(), { maxInlineBytes: 4096 });
    const input = `${'é'.repeat(5000)} ${SECRET} end`;
    const r = (await client.callTool({ name: 'hello', arguments: { input } })) as CallToolResult;
    const json = expectOneJson(r);
    const full = `hi ${input}`.replace(SECRET, '[redacted]');
    expect(json).toEqual({
      output_preview: expect.stringMatching(/^hi é+…$/),
      output_bytes: Buffer.byteLength(full),
      output_uri: expect.stringMatching(/^hatchery-output:\/\/[0-9a-f-]{36}\/1$/),
      run_id: expect.stringMatching(UUID),
      note: expect.stringMatching(
        /^the output is 10 KB, over the server's inline limit of 4 KB: .* \(kept for 1 hour\)$/,
      ),
    });
    expect(Buffer.byteLength(String(json.output_preview))).toBeLessThanOrEqual(2048 + 3);
    expect(String(json.output_preview)).not.toContain('\uFFFD');
    expect(r.content[1]).toMatchObject({
      type: 'resource_link',
      uri: json.output_uri,
      mimeType: 'text/plain',
    });
    expect(await readText(client, String(json.output_uri))).toBe(full);
    // Small results stay inline.
    expect(expectOneJson(await client.callTool({ name: 'hello', arguments: { input: 'x' } })).output).toBe(
      'hi x',
    );
  });

  it('a large answer without an output (a long list) is kept whole as JSON; its small fields stay', async () => {
    const dir = folder();
    for (let i = 0; i < 30; i++) writeHatchery(dir, `e${i}.json`, echoDef(`echo_${i}`, `${i} `));
    const { client } = await serve(dir, { maxInlineBytes: 1024 });
    const r = (await client.callTool({ name: 'hatchery_list', arguments: {} })) as CallToolResult;
    const json = expectOneJson(r);
    expect(json).toEqual({
      omitted: ['hatcheries'],
      result_bytes: expect.any(Number),
      result_uri: expect.stringMatching(/^hatchery-output:\/\/[0-9a-f-]{36}\/1$/),
      note: expect.stringMatching(/the fields in "omitted" are in the JSON at result_uri/),
    });
    expect(r.content[1]).toMatchObject({
      type: 'resource_link',
      uri: json.result_uri,
      mimeType: 'application/json',
    });
    const read = await client.readResource({ uri: String(json.result_uri) });
    expect(read.contents[0]?.mimeType).toBe('application/json');
    const full = JSON.parse((read.contents[0] as { text: string }).text) as { hatcheries: unknown[] };
    expect(full.hatcheries).toHaveLength(33);
  });

  it("a large failure keeps its error and code inline; the rest (a budget's partial outputs) goes to a resource", () => {
    const store = new OutputStore();
    const guard = new OutboundGuard(secretRedactor({ API_KEY: SECRET }), { maxInlineBytes: 4096 }, store);
    const partial = { Draft: `${'p'.repeat(60_000)} ${SECRET}` };
    const error = `budget exhausted: ${'e'.repeat(5000)}`;
    const r = guard.result(jsonResult({ error, code: 'BUDGET_EXHAUSTED', partial }, { isError: true }));
    expect(r.isError).toBe(true);
    const json = expectOneJson(r);
    expect(json).toMatchObject({ error, code: 'BUDGET_EXHAUSTED', omitted: ['partial'] });
    const kept = JSON.parse(store.read(String(json.result_uri))!) as { partial: { Draft: string } };
    expect(kept.partial.Draft).toBe(`${'p'.repeat(60_000)} [redacted]`);
    // The gate's own results pass it again unchanged.
    expect(guard.result(r)).toBe(r);
  });

  it('a result the gate made carries no secret and passes the gate again unchanged', () => {
    const make = () =>
      new OutboundGuard(
        secretRedactor({ API_KEY: SECRET }),
        { maxInlineBytes: 4096, maxResultBytes: 8192 },
        new OutputStore(),
      );
    const _meta = { 'hatchery/usage': { input_tokens: 5, output_tokens: 3 } };
    const values: Record<string, unknown>[] = [
      { output: 'echo: m1', run_id: 'r1', usage: { input_tokens: 5 } },
      { output: `the key is ${SECRET}`, [`k ${SECRET}`]: [SECRET, 1, null] },
      { output: 'x'.repeat(20_000), run_id: 'r2' },
      { error: `failed: ${SECRET}`, code: 'PROVIDER' },
      { items: Array.from({ length: 40 }, (_, i) => `${i}`.repeat(400)) },
      { items: Array.from({ length: 500 }, (_, i) => `${i}`.repeat(100)) },
    ];
    for (const value of values) {
      for (const options of [{}, { isError: true }, { _meta }, { schema: true, _meta }]) {
        const g = make();
        const r = g.result(jsonResult(value, options), { schema: options.schema });
        expect(JSON.stringify(r)).not.toContain(SECRET);
        expect(g.result(r)).toBe(r);
      }
    }
  });

  it('a structured result that cannot be shortened to fit is an error saying which option to raise', () => {
    const guard = new OutboundGuard((t) => t, { maxResultBytes: 1024 });
    const value = { items: Array.from({ length: 100 }, (_, i) => `${i}`.repeat(100)) };
    for (const schema of [false, true]) {
      const r = guard.result(jsonResult(value), { schema });
      expect(r.isError).toBe(true);
      expect(jsonOf(r)).toEqual({
        error:
          "the structured result was dropped: it is over the server's limit of 1 KB; raise --max-result-bytes to receive it",
        code: 'INTERNAL',
      });
      // A tool with an output schema gets no structuredContent its client would check against the schema.
      expect(r.structuredContent).toEqual(schema ? undefined : jsonOf(r));
    }
  });

  it('a tool with an outputSchema keeps its object inline whatever the inline limit', async () => {
    const { client } = await serve(folder(), { maxInlineBytes: 1024 });
    await client.listTools();
    const r = await client.callTool({ name: 'city_facts', arguments: { input: 'Oslo' } });
    expect(r.structuredContent).toEqual({ city: 'Oslo', population: 709000 });
  });

  it('after the TTL the resource is gone, with a message that says it expired and what to do', async () => {
    const { client } = await serve(folder(), { maxInlineBytes: 1024, outputs: { maxAgeMs: 200 } });
    const r = await client.callTool({ name: 'hello', arguments: { input: 'y'.repeat(3000) } });
    const uri = String(expectOneJson(r).output_uri);
    expect(expectOneJson(r).note).toMatch(/\(kept for 200 ms\)$/);
    await waitFor(
      async () =>
        client.readResource({ uri }).then(
          () => false,
          (e: Error) => e.message,
        ),
      10_000,
      'the output to expire',
    ).then((message) =>
      expect(message).toMatch(
        /the output hatchery-output:\/\/.* has expired: outputs are kept .*run the tool again/,
      ),
    );
  });

  it('the count and byte caps drop the oldest outputs first, saying so', async () => {
    const { client } = await serve(folder(), {
      maxInlineBytes: 1024,
      outputs: { maxKept: 5, maxTotalBytes: 10_000 },
    });
    const uris: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await client.callTool({ name: 'hello', arguments: { input: `${i}`.repeat(4000) } });
      uris.push(String(expectOneJson(r).output_uri));
    }
    // 4 × 4 KB is over the 10,000 bytes kept: the first two went.
    await expect(client.readResource({ uri: uris[0]! })).rejects.toThrow(
      /was dropped to make room for newer ones/,
    );
    await expect(client.readResource({ uri: uris[1]! })).rejects.toThrow(/was dropped to make room/);
    expect(await readText(client, uris[3]!)).toBe(`hi ${'3'.repeat(4000)}`);
  });

  it('hostile and unknown output URIs get a short error, never a file', async () => {
    const { client } = await serve(folder());
    for (const uri of [
      'hatchery-output://../../etc/passwd',
      'hatchery-output://00000000-0000-0000-0000-000000000000/1',
      `hatchery-output://${'a'.repeat(100_000)}`,
    ]) {
      const err = await client.readResource({ uri }).then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect(err).toMatch(/no output hatchery-output:\/\/.*: it never existed, or it was dropped/);
      expect(err!.length).toBeLessThan(600);
    }
  });

  it('serve --max-inline-bytes and --output-ttl set both; hatchery_result reads an expired output again from the journal', async () => {
    const dir = folder();
    const s = await spawnCli(dir, { args: ['--max-inline-bytes', '2048', '--output-ttl', '1'] });
    cleanups.push(s.close);
    const started = jsonOf(
      await s.client.callTool({
        name: 'hatchery_start',
        arguments: { name: 'hello', input: 'z'.repeat(5000) },
      }),
    );
    const first = jsonOf(
      await s.client.callTool({ name: 'hatchery_result', arguments: { run_id: started.run_id } }),
    );
    expect(first).toMatchObject({ output_bytes: 5003, note: expect.stringMatching(/kept for 1 s/) });
    const uri = String(first.output_uri);
    await waitFor(
      () =>
        s.client.readResource({ uri }).then(
          () => false,
          () => true,
        ),
      10_000,
      'the output to expire',
    );
    const again = jsonOf(
      await s.client.callTool({ name: 'hatchery_result', arguments: { run_id: started.run_id } }),
    );
    expect(again.output_uri).not.toBe(uri);
    expect(await readText(s.client, String(again.output_uri))).toBe(`hi ${'z'.repeat(5000)}`);
  });

  it('serve refuses an --output-ttl or --max-inline-bytes that is not a positive integer', async () => {
    for (const [args, name] of [
      [['--output-ttl', '0'], 'output-ttl'],
      [['--max-inline-bytes=-5'], 'max-inline-bytes'],
      [['--output-ttl', '1h'], 'output-ttl'],
    ] as const) {
      const r = await runCli(['serve', '--dir', hatcheryDir(), ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--${name} must be a positive integer`);
    }
  });
});

describe('a 2026-07-28 client (SDK v2) gets the same shape', () => {
  it('a result, a failure and a large output as a resource, over stdio', async () => {
    const client = new V2Client(
      { name: 'results-2026', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', '--dir', folder(), '--max-inline-bytes', '2048'],
        env: { HATCHERY_STATE: TEST_STATE },
        stderr: 'ignore',
      }),
    );
    cleanups.push(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
    const ok = await client.callTool({ name: 'hello', arguments: { input: 'Ada' } });
    expect(expectOneJson(ok)).toMatchObject({ output: 'hi Ada' });
    const failed = await client.callTool({ name: 'hatchery_run', arguments: { name: 'nope' } });
    expect(failed.isError).toBe(true);
    expect(expectOneJson(failed)).toMatchObject({ code: 'NOT_FOUND' });
    const big = await client.callTool({ name: 'hello', arguments: { input: 'w'.repeat(3000) } });
    const summary = expectOneJson(big);
    expect(summary).toMatchObject({ output_bytes: 3003 });
    const read = await client.readResource({ uri: String(summary.output_uri) });
    expect((read.contents[0] as { text: string }).text).toBe(`hi ${'w'.repeat(3000)}`);
  });
});
