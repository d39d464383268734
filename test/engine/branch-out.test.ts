/**
 * A fan-out's branch reads its parent's outputs through a view shared with its siblings until its
 * first write, and the walk skips the write of a branch's last output (nobody reads it). These check
 * what users see: a branch's outputs are visible to its later nodes and to no sibling, the join and
 * the nodes after the fan-out see out.<branch>, a write_output path may read the node's own output,
 * and map items each keep their own outputs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

const runtime = () => new Runtime({ providers: {}, env: {} });

describe('outputs in fan-out branches', () => {
  it('are seen by later nodes of the same branch, not by siblings; the join and later nodes see out.<branch>', async () => {
    const h = load(
      hatch([
        echo('X', 'x:{{ ctx.input }}', { next: 'P' }),
        {
          name: 'P',
          type: 'parallel',
          branches: ['A1', 'B1', 'C1'],
          join: '{{ out.A1 }}|{{ out.B1 }}|{{ out.C1 }}|{{ out.X }}',
          next: 'Z',
        },
        echo('A1', 'a1<{{ out.X }}>', { next: 'A2' }),
        echo('A2', 'a2<{{ out.A1 }}>', { next: 'A3' }),
        echo('A3', 'a3<{{ out.A2 }}|{{ out.B2 | default("none") }}>'),
        echo('B1', 'b1<{{ out.A1 | default("none") }}|{{ out.A2 | default("none") }}>', { next: 'B2' }),
        echo('B2', 'b2<{{ out.B1 }}|{{ out.A2 | default("none") }}>'),
        echo('C1', 'c1<{{ out.A2 | default("none") }}|{{ out.B2 | default("none") }}|{{ out.X }}>'),
        echo('Z', 'z<{{ out.P }}><{{ out.A1 }}><{{ out.A2 | default("none") }}>'),
      ]),
    );
    for (let round = 0; round < 2; round++) {
      const res = await runtime().run(h, { input: 'go' });
      const a = 'a3<a2<a1<x:go>>|none>';
      const b = 'b2<b1<none|none>|none>';
      const c = 'c1<none|none|x:go>';
      expect(res.outputs).toEqual({
        X: 'x:go',
        A1: a,
        B1: b,
        C1: c,
        P: `${a}|${b}|${c}|x:go`,
        Z: res.output,
      });
      expect(res.output).toBe(`z<${a}|${b}|${c}|x:go><${a}><none>`);
    }
  });

  it('fan-outs one after another see every output before them, whatever the number of outputs so far', async () => {
    // After a fan-out the scope writes into a new out when it holds few outputs (engine/scope.ts
    // moveOut), and into the same one when it holds many: both must read the same to every template.
    for (const before of [2, 40]) {
      const lead = Array.from({ length: before }, (_, i) => `L${i}`);
      const h = load(
        hatch([
          ...lead.map((n, i) => echo(n, `${n}:{{ ctx.input }}`, { next: lead[i + 1] ?? 'P' })),
          { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Q' },
          echo('A', 'a<{{ out.L0 }}>'),
          echo('B', 'b<{{ out.L1 }}>'),
          { name: 'Q', type: 'parallel', branches: ['C', 'D'], join: '{{ out.C }}+{{ out.D }}', next: 'Z' },
          echo('C', 'c<{{ out.A }}|{{ out.P | length }}>'),
          echo('D', `d<{{ out.B }}|{{ out.L${before - 1} }}>`),
          echo('Z', 'z<{{ out.Q }}|{{ out.A }}|{{ out.L0 }}>'),
        ]),
      );
      const runtime = new Runtime({ providers: {}, env: {} });
      for (let round = 0; round < 2; round++) {
        const res = await runtime.run(h, { input: 'go' });
        const c = 'c<a<L0:go>|28>';
        const d = `d<b<L1:go>|L${before - 1}:go>`;
        expect(res.output).toBe(`z<${c}+${d}|a<L0:go>|L0:go>`);
        // Every output, in the order of first writes.
        expect(Object.keys(res.outputs)).toEqual([...lead, 'A', 'B', 'P', 'C', 'D', 'Q', 'Z']);
        expect(res.outputs.P).toBe('## A\na<L0:go>\n\n## B\nb<L1:go>');
      }
      await runtime.close();
    }
  });

  it('nested fan-outs keep each level apart', async () => {
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'] },
        echo('A', 'a', { next: 'Q' }),
        {
          name: 'Q',
          type: 'parallel',
          branches: ['Q1', 'Q2'],
          join: '{{ out.A }}/{{ out.Q1 }}/{{ out.Q2 }}',
          next: 'A9',
        },
        echo('Q1', 'q1<{{ out.A }}>', { next: 'Q1b' }),
        echo('Q1b', 'q1b<{{ out.Q1 }}|{{ out.Q2 | default("none") }}>'),
        echo('Q2', 'q2<{{ out.Q1 | default("none") }}>'),
        echo('A9', 'a9<{{ out.Q }}|{{ out.Q1 }}|{{ out.Q1b | default("none") }}>'),
        echo('B', 'b<{{ out.A | default("none") }}|{{ out.Q | default("none") }}>'),
      ]),
    );
    const res = await runtime().run(h);
    expect(res.outputs.A).toBe('a9<a/q1b<q1<a>|none>/q2<none>|q1b<q1<a>|none>|none>');
    expect(res.outputs.B).toBe('b<none|none>');
  });

  it("a branch's last node may read its own output in its write_output path", async () => {
    const dir = tempDir();
    const h = load(
      hatch([
        { name: 'P', type: 'parallel', branches: ['A', 'B'] },
        echo('A', 'first', { next: 'A2' }),
        echo('A2', 'second', { write_output: 'out-{{ out.A2 }}.txt' }),
        echo('B', 'other', { write_output: 'out-{{ out.B }}.txt' }),
      ]),
      dir,
    );
    const res = await new Runtime({ providers: {}, env: {}, cwd: dir, allowWrite: [dir] }).run(h);
    expect(res.outputs).toMatchObject({ A: 'second', B: 'other' });
    expect(readFileSync(path.join(dir, 'out-second.txt'), 'utf8')).toBe('second\n');
    expect(readFileSync(path.join(dir, 'out-other.txt'), 'utf8')).toBe('other\n');
  });

  it('map items each see their own earlier outputs and no other item', async () => {
    const h = load(
      hatch([
        { name: 'M', type: 'map', items: '["a","b","c"]', node: 'I1', concurrency: 2 },
        echo('I1', 'i1<{{ ctx.item }}|{{ out.I2 | default("none") }}>', { next: 'I2' }),
        echo('I2', 'i2<{{ out.I1 }}>'),
      ]),
    );
    const res = await runtime().run(h);
    expect(res.outputs.M).toEqual(['i2<i1<a|none>>', 'i2<i1<b|none>>', 'i2<i1<c|none>>']);
    expect(Object.keys(res.outputs)).toEqual(['M']);
  });
});
