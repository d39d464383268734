/**
 * What a run the durable engine runs again after a crash reports: the nodes its journal already holds
 * are not reported twice; a node whose end the crash lost (the journal writes every tenth of a second)
 * is reported again; the node cut short is reported as started once the first step runs for real.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { DbosSteps, withoutSecrets } from '../../src/runtime/durable/steps.js';

const start = (node: string, step: number): RunEvent => ({
  type: 'node_start',
  runId: 'r',
  hatchery: 'h',
  node,
  kind: 'drone',
  step,
  depth: 0,
});
const end = (node: string, step: number, seq: number): RunEvent => ({
  type: 'node_end',
  runId: 'r',
  hatchery: 'h',
  node,
  step,
  depth: 0,
  output: `out ${node}`,
  ms: 1,
  path: '',
  seq,
  next: null,
});

/** A step runner that answers the first `recorded` steps from a checkpoint and runs the others. */
function runner(recorded: number) {
  let n = 0;
  return {
    async runStep<R>(fn: () => Promise<R>): Promise<R> {
      if (n++ < recorded) return { ok: `checkpoint ${n}` } as R;
      return fn();
    },
  };
}

describe('a run the engine runs again', () => {
  it('reports only the nodes its journal lacks, and the one cut short once a step runs for real', async () => {
    const steps = new DbosSteps(runner(2), { replaying: true });
    // The journal holds A's end; B ended before the crash but its record was lost; C was cut short.
    steps.recorded([{ type: 'node_end', path: '', seq: 1, node: 'A' }]);
    const seen: RunEvent[] = [];
    const listener = steps.listen((e) => seen.push(e));
    listener(start('A', 1));
    expect(await steps.step('model', async () => 'A live')).toBe('checkpoint 1');
    listener(end('A', 1, 1));
    listener(start('B', 2));
    expect(await steps.step('model', async () => 'B live')).toBe('checkpoint 2');
    listener(end('B', 2, 2));
    listener(start('C', 3));
    expect(seen).toEqual([start('B', 2), { ...end('B', 2, 2), replayed: false }]);
    expect(await steps.step('model', async () => 'C live')).toBe('C live');
    listener(end('C', 3, 3));
    expect(seen.map((e) => `${e.type} ${'node' in e ? e.node : ''}`)).toEqual([
      'node_start B',
      'node_end B',
      'node_start C',
      'node_end C',
    ]);
  });

  it('reports a branch made again from its first call made for real: no twice-told node or call', async () => {
    // The crash left branch 0 unfinished: node A in it had ended (journal and kept call), B was cut short.
    const kept = new Map([['0.0', { name: 'tool:t', outcome: JSON.stringify({ ok: 'A kept' }) }]]);
    const memos = { load: async () => kept, save: async () => {} };
    const steps = new DbosSteps(runner(0), { replaying: true, memos });
    steps.recorded([{ type: 'node_end', path: '', seq: 1, node: 'A' }]);
    const seen: RunEvent[] = [];
    const listener = steps.listen((e) => seen.push(e));
    const called = (node: string): RunEvent => ({
      type: 'tool_call',
      runId: 'r',
      hatchery: 'h',
      node,
      depth: 0,
      tool: 't',
      ms: 1,
      isError: false,
    });
    const out = await steps.step('branch:0', async () => {
      listener(start('A', 1));
      const a = await steps.step('tool:t', async () => 'A live');
      listener(called('A'));
      listener(end('A', 1, 1));
      listener(start('B', 2));
      const b = await steps.step('tool:t', async () => 'B live');
      listener(called('B'));
      listener(end('B', 2, 2));
      return `${a} ${b}`;
    });
    expect(out).toBe('A kept B live');
    expect(seen).toEqual([start('B', 2), called('B'), end('B', 2, 2)]);
  });

  it('gives a failed step back as the same error, code and context, after a crash', async () => {
    const stored: unknown[] = [];
    const once = {
      async runStep<R>(fn: () => Promise<R>): Promise<R> {
        const out = await fn();
        // What DBOS keeps is JSON-like data: a class instance would not survive the round trip.
        stored.push(JSON.parse(JSON.stringify(out)));
        return stored.at(-1) as R;
      },
    };
    const { HatcheryError } = await import('../../src/core/errors.js');
    const err = await new DbosSteps(once)
      .step('tool:x', async () => {
        throw new HatcheryError('TOOL', 'the tool broke', { node: 'N', tool: 'x' });
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HatcheryError);
    expect(err).toMatchObject({ code: 'TOOL', message: 'the tool broke', context: { node: 'N', tool: 'x' } });
  });

  it('stores a step without the secret values it returned', async () => {
    const kept: unknown[] = [];
    const keep = {
      async runStep<R>(fn: () => Promise<R>): Promise<R> {
        kept.push(await fn());
        return kept.at(-1) as R;
      },
    };
    const secret = 'hunter2-database-password';
    const got = await new DbosSteps(keep, { secrets: [secret] }).step('tool:env', async () => ({
      text: `pw=${secret}`,
      nested: [{ v: secret }],
    }));
    expect(got).toEqual({ text: 'pw=[redacted]', nested: [{ v: '[redacted]' }] });
    expect(JSON.stringify(kept)).not.toContain(secret);
    expect(withoutSecrets(42, [secret])).toBe(42);
  });
});
