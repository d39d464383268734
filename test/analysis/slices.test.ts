import { afterEach, describe, expect, it } from 'vitest';
import { tuning } from '../../src/loader/analysis/index.js';
import { hatch, seededRandom } from '../helpers.js';
import { report } from './helpers.js';

// Files of thousands of nodes analyse their variables in small slices, each over the nodes between
// its setters and its readers only. These tests force that mode on small files (one variable per
// slice) and check it reports exactly what one run over every node reports.

const defaults = { ...tuning };
afterEach(() => {
  Object.assign(tuning, defaults);
});

/** Problems of `def` analysed in one run (as files of up to thousands of nodes are). */
function whole(def: unknown): string[] {
  Object.assign(tuning, defaults);
  return report(def);
}

/** Problems of `def` analysed one variable at a time, each over its region only. */
function sliced(def: unknown, sliceVars = 1): string[] {
  Object.assign(tuning, { regionNodes: 0, sliceVars });
  try {
    return report(def);
  } finally {
    Object.assign(tuning, defaults);
  }
}

/** Seeded, so a failure is reproducible. */
const rng = seededRandom;

/** A random file of `n` nodes: drones, parallels, maps and loops reading and saving variables. */
function randomFile(seed: number, n: number): Record<string, unknown> {
  const r = rng(seed);
  const pick = (k: number) => Math.floor(r() * k);
  const name = (i: number) => `N${i}`;
  const ref = () => {
    const soft = r() < 0.3 ? ' | default("")' : '';
    const x = pick(n);
    if (r() < 0.15) return `{{ ctx.item${soft} }}`;
    return r() < 0.5 ? `{{ ctx.v${pick(6)}${soft} }}` : `{{ out.${name(x)}${soft} }}`;
  };
  const nodes: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const later = () => name(i + 1 + pick(Math.max(1, n - i - 1)));
    const anyNode = () => name(pick(n));
    const next = i + 1 < n ? (r() < 0.2 ? [later(), anyNode()] : r() < 0.9 ? later() : undefined) : undefined;
    const kind = r();
    const node: Record<string, unknown> = { name: name(i) };
    if (kind < 0.12 && i + 1 < n) {
      Object.assign(node, { type: 'parallel', branches: r() < 0.5 ? [later()] : [later(), later()] });
      if (r() < 0.3) node.on_error = 'continue';
    } else if (kind < 0.2 && i + 1 < n) {
      Object.assign(node, { type: 'map', items: '["a", "b"]', node: later() });
    } else if (kind < 0.27 && i + 1 < n) {
      Object.assign(node, { type: 'loop', body: later(), until: 'done', max_iterations: 2 });
    } else {
      node.usr_prompt = `${ref()} and ${ref()}${r() < 0.5 ? ` then ${ref()}` : ''}`;
      if (r() < 0.4) node.save_output = `v${pick(6)}`;
      if (r() < 0.1) node.conversation = anyNode();
      if (r() < 0.1) Object.assign(node, { max_visits: 1, on_limit: anyNode() });
    }
    if (next !== undefined && node.type !== 'loop') node.next = next;
    else if (next !== undefined) node.next = Array.isArray(next) ? next[0] : next;
    nodes.push(node);
  }
  return hatch(nodes, { inputs: { topic: 'a topic' } });
}

describe('variables analysed in slices over their regions', () => {
  it('report the same problems as one run, for random files of every node kind', () => {
    let withProblems = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const def = randomFile(seed, 4 + (seed % 20));
      const expected = whole(def);
      if (expected.some((p) => /defined|unset|never|conversation/.test(p))) withProblems++;
      expect(sliced(def), `seed ${seed}`).toEqual(expected);
      expect(sliced(def, 3), `seed ${seed}, 3 variables a slice`).toEqual(expected);
    }
    // The files exercise the variable checks, not just clean runs.
    expect(withProblems).toBeGreaterThan(50);
  });

  it('a chain that reads what the node before saved is clean either way, and a read before the save is not', () => {
    const chain = (n: number, late: boolean) =>
      hatch(
        Array.from({ length: n }, (_, i) => ({
          name: `C${i}`,
          usr_prompt: i === 0 ? 'start' : `{{ ctx.s${late && i === n - 1 ? n : i - 1} }} {{ out.C${i - 1} }}`,
          save_output: `s${i}`,
          ...(i + 1 < n ? { next: `C${i + 1}` } : {}),
        })),
      );
    expect(sliced(chain(60, false))).toEqual([]);
    expect(whole(chain(60, false))).toEqual([]);
    const broken = whole(chain(60, true));
    expect(broken).toHaveLength(1);
    expect(sliced(chain(60, true))).toEqual(broken);
  });
});
