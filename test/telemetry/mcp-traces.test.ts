/**
 * Over MCP, a served run continues the client's trace: its invoke_workflow span has the trace id and
 * parent span of the tools/call's `_meta.traceparent`, and the downstream MCP server it calls receives
 * the context of the execute_tool span of that call. A malformed traceparent starts a new trace.
 * The runtime here gets its environment as an option (not process.env), as an embedding host would.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { hatcheryDir, textOf, writeRelay } from '../mcp/helpers.js';
import { OtlpReceiver } from './otlp-receiver.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(headers?: string) {
  const receiver = await new OtlpReceiver().start();
  const dir = hatcheryDir();
  const log = writeRelay(dir, tempDir('otel-trace-'));
  const env: Record<string, string> = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
  if (headers) env.OTEL_EXPORTER_OTLP_HEADERS = headers;
  const runtime = new Runtime({ env });
  const core = await HatcheryMcpServer.start({ dir, runtime, watch: false, log: () => {} });
  const client = new Client({ name: 'traced', version: '1.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await core.connect(b);
  await client.connect(a);
  let closed = false;
  /** Ends the session and the runtime, which flushes the spans. */
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.close();
    await core.close();
    await runtime.close();
  };
  cleanups.push(async () => {
    await close();
    await receiver.close();
  });
  const seen = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { traceparent?: string })
      : [];
  return { client, receiver, seen, close };
}

describe('OpenTelemetry over MCP', () => {
  it('continues the client trace and passes the execute_tool span downstream', async () => {
    const { client, receiver, seen, close } = await setup('authorization=Basic%20dXNlcjpwYXNz,x-tenant=t1');
    const r = await client.callTool({
      name: 'relay',
      arguments: { input: 'hi' },
      _meta: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
    });
    expect(textOf(r)).toBe('hi');
    await close();
    // Headers and endpoint came from the runtime's own environment.
    expect(receiver.requests[0]!.path).toBe('/v1/traces');
    expect(receiver.requests[0]!.headers.authorization).toBe('Basic dXNlcjpwYXNz');
    expect(receiver.requests[0]!.headers['x-tenant']).toBe('t1');

    const run = receiver.one('invoke_workflow relay');
    expect(run.traceId).toBe(TRACE_ID);
    expect(run.parentSpanId).toBe(CLIENT_SPAN);
    const tool = receiver.one('execute_tool echo');
    expect(tool.traceId).toBe(TRACE_ID);
    expect(tool.attributes['gen_ai.tool.type']).toBe('extension');
    expect(receiver.byId(tool.parentSpanId)?.name).toMatch(/ Call$/);
    expect(receiver.byId(tool.parentSpanId)?.parentSpanId).toBe(run.spanId);
    expect(seen().map((s) => s.traceparent)).toEqual([`00-${TRACE_ID}-${tool.spanId}-01`]);
  });

  it('a malformed traceparent is ignored: the run is the root of a new trace', async () => {
    const { client, receiver, seen, close } = await setup();
    const r = await client.callTool({
      name: 'relay',
      arguments: { input: 'x' },
      _meta: { traceparent: `00-${TRACE_ID}-../../etc/passwd-01` },
    });
    expect(textOf(r)).toBe('x');
    await close();
    const run = receiver.one('invoke_workflow relay');
    expect(run.parentSpanId).toBeUndefined();
    expect(run.traceId).not.toBe(TRACE_ID);
    expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
    const tool = receiver.one('execute_tool echo');
    expect(seen().map((s) => s.traceparent)).toEqual([`00-${run.traceId}-${tool.spanId}-01`]);
  });

  it('a client trace that is not sampled records no spans but still propagates', async () => {
    const { client, receiver, seen, close } = await setup();
    await client.callTool({
      name: 'relay',
      arguments: { input: 'y' },
      _meta: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-00` },
    });
    await close();
    expect(receiver.spans).toEqual([]);
    const [down] = seen();
    expect(down!.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
  });
});
