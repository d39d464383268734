/**
 * A run's OpenTelemetry trace context: checked on the way in (a malformed one is dropped, never an
 * error), kept in the run's journal, and sent as `_meta.traceparent` / `tracestate` on every tools/call
 * the run makes to MCP servers, from nested hatch: runs too, and again when the run is resumed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { MAX_TRACESTATE, traceContext } from '../../src/core/trace.js';
import { FileRunStore } from '../../src/journal/file-store.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import type { SeenTrace } from '../fixtures/mcp-v2-server.js';
import { fixtureJs } from '../fixtures/paths.js';
import { tempDir } from '../helpers.js';
import { callTool, loadIn, type Reply, Scripted } from './helpers.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';
const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

/** An mcpServers entry of the v2 fixture server logging the trace keys of each call to `log`. */
const traced = (log: string) => ({
  command: process.execPath,
  args: [fixtureJs('mcp-v2-server'), '--trace-log', log],
});

/** What the fixture server saw, one entry per tools/call. */
function seen(log: string): SeenTrace[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SeenTrace);
}

function runtime(model = new Scripted([]), store?: FileRunStore): Runtime {
  const rt = new Runtime({ providers: { openai: model }, env: {}, store });
  runtimes.push(rt);
  return rt;
}

describe('traceContext', () => {
  it('keeps a valid W3C traceparent and tracestate', () => {
    expect(traceContext({ traceparent: TRACEPARENT, tracestate: TRACESTATE })).toEqual({
      traceparent: TRACEPARENT,
      tracestate: TRACESTATE,
    });
    expect(traceContext({ traceparent: TRACEPARENT })).toEqual({ traceparent: TRACEPARENT });
  });

  it('drops a malformed traceparent, and with it the whole context', () => {
    const bad = [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // all-zero trace id
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // all-zero parent id
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // upper case
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // the invalid version
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace id
      `${TRACEPARENT}\nx-injected: 1`, // a header injection
      ` ${TRACEPARENT}`,
      '',
    ];
    for (const traceparent of bad)
      expect(traceContext({ traceparent, tracestate: TRACESTATE })).toBeUndefined();
    for (const value of [
      undefined,
      null,
      'x',
      42,
      [TRACEPARENT],
      { traceparent: 7 },
      { tracestate: TRACESTATE },
    ])
      expect(traceContext(value)).toBeUndefined();
  });

  it('drops a tracestate that is too long, not text, or not printable ASCII, keeping the traceparent', () => {
    const only = { traceparent: TRACEPARENT };
    expect(traceContext({ ...only, tracestate: 'a'.repeat(MAX_TRACESTATE + 1) })).toEqual(only);
    expect(traceContext({ ...only, tracestate: 'a=1\r\nb=2' })).toEqual(only);
    expect(traceContext({ ...only, tracestate: 'a=é' })).toEqual(only);
    expect(traceContext({ ...only, tracestate: 5 })).toEqual(only);
    expect(traceContext({ ...only, tracestate: 'a'.repeat(MAX_TRACESTATE) })?.tracestate).toHaveLength(
      MAX_TRACESTATE,
    );
  });
});

describe('trace context of a run', () => {
  it('reaches every tools/call to a server: a drone, a baneling and a nested hatch: run', async () => {
    const dir = tempDir();
    const log = path.join(dir, 'trace.jsonl');
    const mcpServers = { down: traced(log) };
    writeFileSync(
      path.join(dir, 'sub.json'),
      JSON.stringify({
        name: 'sub',
        desc: 'calls the server from a nested run',
        mcpServers,
        nodes: [{ type: 'tool', tool_name: 'mcp:down/echo', tool_args: { text: 'nested {{ ctx.input }}' } }],
      }),
    );
    const h = loadIn(dir, {
      name: 'main',
      desc: 'd',
      mcpServers,
      nodes: [
        { name: 'Agent', usr_prompt: 'go', tools: ['mcp:down/echo'], next: 'Add' },
        { name: 'Add', type: 'tool', tool_name: 'mcp:down/add', tool_args: { a: 1, b: 2 }, next: 'Sub' },
        { name: 'Sub', type: 'tool', tool_name: 'hatch:sub.json', tool_args: { input: 'x' } },
      ],
    });
    const model = new Scripted([callTool('echo', { text: 'from the drone' }), 'done']);
    const res = await runtime(model).run(h, { trace: { traceparent: TRACEPARENT, tracestate: TRACESTATE } });
    expect(res.output).toBe('nested x');
    expect(seen(log).map((s) => [s.tool, s.traceparent, s.tracestate])).toEqual([
      ['echo', TRACEPARENT, TRACESTATE],
      ['add', TRACEPARENT, TRACESTATE],
      ['echo', TRACEPARENT, TRACESTATE],
    ]);
  });

  it('reaches the calls of a spawned agent', async () => {
    const dir = tempDir();
    const log = path.join(dir, 'trace.jsonl');
    const h = loadIn(dir, {
      name: 'spawner',
      desc: 'd',
      mcpServers: { down: traced(log) },
      nodes: [
        {
          name: 'Boss',
          usr_prompt: 'go',
          spawn: { templates: [{ name: 'worker', desc: 'calls the server', tools: ['mcp:down/echo'] }] },
        },
      ],
    });
    const model = new Scripted((req: ChatRequest): Reply => {
      const turn = req.messages.filter((m) => m.role === 'tool').length;
      const agent = req.system.startsWith('You are a focused helper agent');
      if (turn === 0)
        return agent
          ? callTool('echo', { text: 'agent' })
          : callTool('spawn_agent', { template: 'worker', task: 't' });
      return 'done';
    });
    await runtime(model).run(h, { trace: { traceparent: TRACEPARENT } });
    expect(seen(log)).toEqual([{ tool: 'echo', protocolVersion: '2025-11-25', traceparent: TRACEPARENT }]);
  });

  it('sends no trace keys for a run without one or with a malformed one', async () => {
    const dir = tempDir();
    const log = path.join(dir, 'trace.jsonl');
    const h = loadIn(dir, {
      name: 'main',
      desc: 'd',
      mcpServers: { down: traced(log) },
      nodes: [{ type: 'tool', tool_name: 'mcp:down/echo', tool_args: { text: 'hi' } }],
    });
    const rt = runtime();
    await rt.run(h);
    await rt.run(h, { trace: { traceparent: '00-zz-00f067aa0ba902b7-01', tracestate: TRACESTATE } });
    await rt.run(h, { trace: 'not an object' as never });
    expect(seen(log)).toEqual([
      { tool: 'echo', protocolVersion: '2025-11-25' },
      { tool: 'echo', protocolVersion: '2025-11-25' },
      { tool: 'echo', protocolVersion: '2025-11-25' },
    ]);
  });

  it('is kept in the journal, and a resumed run sends the stored one', async () => {
    const dir = tempDir();
    const log = path.join(dir, 'trace.jsonl');
    const state = path.join(dir, 'state');
    const h = loadIn(dir, {
      name: 'main',
      desc: 'd',
      mcpServers: { down: traced(log) },
      nodes: [
        { name: 'Before', type: 'tool', tool_name: 'mcp:down/echo', tool_args: { text: 'one' }, next: 'Ask' },
        { name: 'Ask', type: 'ask', question: 'Go on?', next: 'After' },
        { name: 'After', type: 'tool', tool_name: 'mcp:down/echo', tool_args: { text: '{{ out.Ask }}' } },
      ],
    });
    const rt = runtime(new Scripted([]), new FileRunStore(state, { env: {} }));
    const err = (await rt
      .run(h, { trace: { traceparent: TRACEPARENT, tracestate: TRACESTATE } })
      .catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('INPUT_REQUIRED');
    const runId = String(err.context.runId);
    await rt.close();
    const first = JSON.parse(readFileSync(path.join(state, `${runId}.jsonl`), 'utf8').split('\n')[0]!);
    expect(first).toMatchObject({
      type: 'run_start',
      trace: { traceparent: TRACEPARENT, tracestate: TRACESTATE },
    });

    // Another process (a fresh runtime and store) resumes it with the answer, passing no trace.
    const again = runtime(new Scripted([]), new FileRunStore(state, { env: {} }));
    const res = await again.resume(runId, { answer: 'yes' });
    expect(res.output).toBe('yes');
    expect(seen(log).map((s) => [s.tool, s.traceparent, s.tracestate])).toEqual([
      ['echo', TRACEPARENT, TRACESTATE],
      ['echo', TRACEPARENT, TRACESTATE],
    ]);
  });

  it('keeps no malformed trace context in the journal', async () => {
    const dir = tempDir();
    const state = path.join(dir, 'state');
    const h = loadIn(dir, {
      name: 'main',
      desc: 'd',
      nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'hi' } }],
    });
    const rt = runtime(new Scripted([]), new FileRunStore(state, { env: {} }));
    const res = await rt.run(h, { trace: { traceparent: `${TRACEPARENT}\n{"forged":true}` } });
    await rt.close();
    const first = JSON.parse(readFileSync(path.join(state, `${res.runId}.jsonl`), 'utf8').split('\n')[0]!);
    expect(first.type).toBe('run_start');
    expect(first).not.toHaveProperty('trace');
  });
});
