/**
 * The trace context of an MCP tool call (`_meta.traceparent` / `tracestate`, SEP-414) is kept with
 * the run in its journal and passed on to the downstream MCP servers the run calls, for a direct call
 * and for a run started with hatchery_start; a malformed one is dropped without failing the call.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { hatcheryDir, textOf, waitFor, writeRelay } from './helpers.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TRACESTATE = 'vendor=opaque';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup() {
  const dir = hatcheryDir();
  const log = writeRelay(dir, tempDir('trace-'));
  const state = tempDir('state-');
  const runtime = new Runtime({ env: {}, store: new FileRunStore(state, { env: {} }) });
  const core = await HatcheryMcpServer.start({ dir, runtime, watch: false, log: () => {} });
  const client = new Client({ name: 'traced', version: '1.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await core.connect(b);
  await client.connect(a);
  cleanups.push(async () => {
    await client.close();
    await core.close();
    await runtime.close();
  });
  // Only whole lines: the downstream server may have created the file and not written its line yet.
  const seen = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .slice(0, -1)
          .map((l) => JSON.parse(l) as { traceparent?: string; tracestate?: string })
      : [];
  const journal = async (id: string) => (await runtime.store!.read(id))!.meta;
  return { client, core, seen, journal };
}

describe('trace context over MCP', () => {
  it('a call with _meta.traceparent passes it on downstream and keeps it in the journal', async () => {
    const { client, core, seen, journal } = await setup();
    const r = await client.callTool({
      name: 'relay',
      arguments: { input: 'hi' },
      _meta: { traceparent: TRACEPARENT, tracestate: TRACESTATE },
    });
    expect(textOf(r)).toBe('hi');
    expect(seen()).toEqual([expect.objectContaining({ traceparent: TRACEPARENT, tracestate: TRACESTATE })]);
    const [run] = await core.runtime.store!.list();
    expect((await journal(run!.id)).trace).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
  });

  it('hatchery_start keeps the trace context of its call for the background run', async () => {
    const { client, seen } = await setup();
    const r = await client.callTool({
      name: 'hatchery_start',
      arguments: { name: 'relay', input: 'later' },
      _meta: { traceparent: TRACEPARENT },
    });
    const id = (r.structuredContent as { run_id: string }).run_id;
    await waitFor(() => seen().length === 1, 10_000, 'the downstream call');
    expect(seen()[0]!.traceparent).toBe(TRACEPARENT);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a malformed traceparent is dropped: the call works and nothing is passed on', async () => {
    const { client, seen } = await setup();
    const r = await client.callTool({
      name: 'relay',
      arguments: { input: 'x' },
      _meta: { traceparent: '00-zz-../../etc-01' },
    });
    expect(textOf(r)).toBe('x');
    expect(seen()[0]!.traceparent).toBeUndefined();
  });
});
