/**
 * The memo a resumed run is served from, built from journal records: which finished executions it
 * serves, where it stops (--from, changed nodes, a route that diverges), across several attempts.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledNode } from '../../src/engine/contracts.js';
import { buildMemo } from '../../src/journal/memo.js';
import type { JournalRecord } from '../../src/journal/store.js';

const end = (node: string, seq: number, path = '', extra: Record<string, unknown> = {}): JournalRecord => ({
  v: 1,
  at: 0,
  type: 'node_end',
  node,
  seq,
  path,
  depth: 0,
  output: `${node}-out`,
  ...extra,
});
const node = (name: string, kind = 'drone') => ({ name, kind }) as CompiledNode;

describe('buildMemo', () => {
  const chain = [end('A', 1), end('B', 2), end('C', 3)];

  it('serves finished leaves by path, seq and name, and nothing after a divergence', () => {
    const { memo } = buildMemo(chain);
    expect(memo.take('', 1, node('A'))).toEqual({ text: 'A-out' });
    // Another node at seq 2 (the route changed): not served, and nothing later in that scope is.
    expect(memo.take('', 2, node('X'))).toBeUndefined();
    expect(memo.take('', 3, node('C'))).toBeUndefined();
  });

  it('never serves containers, and keeps value, usage and the route choice', () => {
    const { memo } = buildMemo([
      end('P', 1),
      end('R', 2, '', { value: { a: 1 }, chose: null, usage: { inputTokens: 3, outputTokens: 4 } }),
    ]);
    expect(memo.take('', 1, node('P', 'parallel'))).toBeUndefined();
    expect(memo.take('', 2, node('R'))).toEqual({
      text: 'R-out',
      value: { a: 1 },
      next: null,
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it('--from cuts at the first top-level execution of the node', () => {
    const built = buildMemo(chain, { from: 'B' });
    expect(built.cut).toBe(2);
    expect(built.memo.take('', 1, node('A'))).toBeDefined();
    expect(built.memo.take('', 2, node('B'))).toBeUndefined();
    expect(built.memo.take('', 3, node('C'))).toBeUndefined();
  });

  it('runs a drone whose conversation is continued again, with everything after it', () => {
    const built = buildMemo(chain, { rerun: new Set(['B']) });
    expect(built.cut).toBe(2);
    expect(built.memo.take('', 1, node('A'))).toBeDefined();
    expect(built.memo.take('', 2, node('B'))).toBeUndefined();
  });

  it('a changed node inside a branch cuts at the fan-out holding it; earlier branches stay served', () => {
    const records = [end('A', 1), end('P1', 1, '/2.0'), end('P2', 1, '/2.1'), end('Par', 2), end('Z', 3)];
    const built = buildMemo(records, { changed: new Set(['P2']) });
    expect(built.cut).toBe(2);
    expect(built.cutNode).toBe('Par');
    expect(built.memo.take('', 1, node('A'))).toBeDefined();
    expect(built.memo.take('/2.0', 1, node('P1'))).toBeUndefined();
    const plain = buildMemo(records);
    expect(plain.memo.take('/2.0', 1, node('P1'))).toEqual({ text: 'P1-out' });
  });

  it('a later attempt with a cut forgets what the earlier attempt did from the cut on', () => {
    const records = [
      ...chain,
      { v: 1, at: 0, type: 'resumed', attempt: 2, from: 'B', cut: 2 },
      end('B', 2, '', { output: 'B-again' }),
    ];
    const { memo } = buildMemo(records);
    expect(memo.take('', 2, node('B'))).toEqual({ text: 'B-again' });
    // C of attempt 1 followed the old B: it must run again.
    expect(memo.take('', 3, node('C'))).toBeUndefined();
  });

  it('ignores records of nested runs and records without a path', () => {
    const { memo, size } = buildMemo([
      { v: 1, at: 0, type: 'node_end', node: 'Inner', seq: 1, depth: 1, output: 'x' },
      { v: 1, at: 0, type: 'node_end', node: 'A', seq: 1, output: 'x' },
    ]);
    expect(size).toBe(0);
    expect(memo.take('', 1, node('A'))).toBeUndefined();
  });
});

describe('buildMemo: keyed calls', () => {
  const call = (key: string | undefined, result: string, isError = false): JournalRecord => ({
    v: 1,
    at: 0,
    type: 'tool_call',
    node: 'B',
    tool: 'echo',
    ref: 'a2a:remote',
    isError,
    result,
    ...(key === undefined ? {} : { key }),
  });
  const records = [
    end('A', 1),
    call('k-1', 'answer one'),
    call('k-2', 'the task failed', true),
    call(undefined, 'x'),
  ];

  it('answers a call the journal holds by its key, errors included', () => {
    const { memo } = buildMemo(records);
    expect(memo.call('k-1')).toEqual({ text: 'answer one', key: 'k-1' });
    expect(memo.call('k-2')).toEqual({ text: 'the task failed', key: 'k-2', isError: true });
    expect(memo.call('k-3')).toBeUndefined();
  });

  it('answers none when the resume runs nodes again on purpose (--from, a changed node)', () => {
    expect(buildMemo(records, { from: 'A' }).memo.call('k-1')).toBeUndefined();
    expect(buildMemo(records, { changed: new Set(['A']) }).memo.call('k-1')).toBeUndefined();
  });
});
