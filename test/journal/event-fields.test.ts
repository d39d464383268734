/**
 * Every field of every journaled event reaches its journal line: one record builder writes them all
 * (but the few it documents as not written), so a field added to an event, its emitter and the
 * readers cannot be dropped on the way. The events below set every field of their type (`Required`):
 * a field added to an event type fails the type check until it is set here, and this test then fails
 * unless the line read back holds it.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { NOT_WRITTEN } from '../../src/journal/records.js';
import { tempDir } from '../helpers.js';
import { readRecords, startedJournal } from './run-record.js';

type Full<K extends RunEvent['type']> = Required<Extract<RunEvent, { type: K }>>;

const usage = { inputTokens: 3, outputTokens: 4, cachedInputTokens: 1, costUsd: 0.5 };
const place = { parent: 7, call: 8, item: 2 };
const model = {
  runId: 'r',
  hatchery: 'inner',
  node: 'N',
  step: 9,
  call: 8,
  depth: 1,
  vendor: 'openai',
  model: 'm',
};

const nodeStart: Full<'node_start'> = {
  type: 'node_start',
  runId: 'r',
  hatchery: 'inner',
  node: 'N',
  kind: 'drone',
  step: 9,
  depth: 1,
  ts: 1,
  ...place,
};
const nodeEnd: Full<'node_end'> = {
  type: 'node_end',
  runId: 'r',
  hatchery: 'inner',
  node: 'N',
  step: 9,
  depth: 1,
  output: 'the output',
  value: { answer: 42 },
  usage,
  ms: 12.5,
  path: 'p',
  seq: 3,
  next: 'M',
  chose: 'M',
  replayed: false,
  ts: 2,
  ...place,
};
const nodeError: Full<'node_error'> = {
  type: 'node_error',
  runId: 'r',
  hatchery: 'inner',
  node: 'N',
  step: 9,
  depth: 1,
  error: 'it broke',
  code: 'PROVIDER',
  ms: 3,
  ...place,
};
const modelCall: Full<'model_call'> = {
  type: 'model_call',
  ...model,
  request: {
    model: 'm',
    system: 'sys',
    messages: [{ role: 'user', content: 'hi' }],
    signal: AbortSignal.timeout(1e6),
  },
  text: 'hello',
  toolCalls: [{ id: 't1', name: 'tool', args: { a: 1 } }],
  stopReason: 'tool_use',
  usage,
  error: 'partly',
  code: 'PROVIDER',
  retries: 1,
  standIn: 'client_fallback',
  ms: 20,
  ts: 3,
} as Full<'model_call'>;
const modelRetry: Full<'model_retry'> = {
  type: 'model_retry',
  ...model,
  attempt: 1,
  waitMs: 250,
  reason: '429 slow down',
  rateLimited: true,
};
const toolCall: Full<'tool_call'> = {
  type: 'tool_call',
  runId: 'r',
  hatchery: 'inner',
  node: 'N',
  tool: 'fetch',
  depth: 1,
  ms: 5,
  isError: false,
  step: 9,
  call: 8,
  parentCall: 6,
  ref: 'http_request',
  args: { url: 'https://example.com' },
  result: 'ok',
  key: '0b5e1c2a-9f3d-8a41-b2c6-7d8e9f0a1b2c',
};
const runStart: Full<'run_start'> = {
  type: 'run_start',
  runId: 'r',
  hatchery: 'inner',
  depth: 1,
  file: '/x/inner.json',
  input: 'in',
  vars: { topic: 'bees' },
  trace: { traceparent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01', tracestate: 'a=b' },
  ...place,
};
const runEnd: Full<'run_end'> = {
  type: 'run_end',
  runId: 'r',
  hatchery: 'inner',
  depth: 1,
  ok: true,
  output: 'done',
  error: 'none',
  code: 'OK',
  usage,
  steps: 2,
  ms: 30,
  ...place,
};

const events: RunEvent[] = [nodeStart, nodeEnd, nodeError, modelCall, modelRetry, toolCall, runStart, runEnd];

describe('a journaled event', () => {
  it('keeps every field in its line, but the ones the record builder says it does not write', async () => {
    const file = path.join(tempDir('hatchery-event-fields-'), 'run.jsonl');
    const j = startedJournal(file, 'r');
    for (const e of events) j.listener(e);
    await j.end('succeeded', {});
    const lines = readRecords(file).slice(1, -1);
    expect(lines).toHaveLength(events.length);
    for (const [i, e] of events.entries()) {
      const line = lines[i]!;
      for (const [k, v] of Object.entries(e)) {
        if (NOT_WRITTEN.has(k)) continue;
        expect(line, `${e.type}.${k}`).toHaveProperty(k);
        expect(line[k], `${e.type}.${k}`).toEqual(v);
      }
    }
    // A model call's request is written as its key and prompt.
    expect(lines[3]).toMatchObject({
      key: expect.any(String),
      system: 'sys',
      messages: [{ role: 'user', content: 'hi' }],
    });
  });
});
