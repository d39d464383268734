import { describe, expect, it } from 'vitest';
import { prepareHatcheryText } from '../../src/loader/prepare.js';
import { type PreparedLoad, quickLoad } from '../../src/loader/quick.js';
import { seededRandom } from '../helpers.js';
import { corpus } from '../schema/corpus.js';

/**
 * `serve` lists a file in the common shapes from quickLoad, without importing the schemas, and
 * any other file from prepareHatcheryText: for every file the quick half decides, both must give the
 * same prepared load (definition, nodes, graph, warnings), and it must decide nothing that fails.
 */
const files = corpus();

/** quickLoad's prepared load, when it gives one. */
function quickPrepareText(text: string, file: string): PreparedLoad | undefined {
  const res = quickLoad(text, file);
  return res?.ok ? res.prepared : undefined;
}

function same(what: string, text: string, file: string): boolean {
  const quick = quickPrepareText(text, file);
  const full = prepareHatcheryText(text, file);
  if (!quick) return false;
  expect(full.ok, `${what}: the quick half accepted a file that fails`).toBe(true);
  if (full.ok) expect(quick, what).toStrictEqual(full.prepared);
  return true;
}

/** The text of `value` with one random edit of its top level or one node (JSON, whatever the file was). */
function edited(value: Record<string, unknown>, rnd: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const copy = structuredClone(value);
  const nodes = Array.isArray(copy.nodes) ? copy.nodes : [];
  const target = nodes.length > 0 && rnd() < 0.7 ? pick(nodes) : copy;
  if (target === null || typeof target !== 'object') return JSON.stringify(copy);
  const obj = target as Record<string, unknown>;
  const key = pick([...Object.keys(obj), 'next', 'name', 'start', '$comment', 'description', 'max_visits']);
  const r = rnd();
  if (r < 0.3) delete obj[key];
  else
    obj[key] = pick([
      'END',
      'nowhere',
      'x',
      '',
      1,
      0,
      ['END'],
      ['nowhere', 'END'],
      {},
      nodes.length > 0 ? ((pick(nodes) as { name?: string } | null)?.name ?? 'x') : 'x',
    ]);
  return JSON.stringify(copy, null, 2);
}

describe('the quick first half of a load', () => {
  it('gives the same prepared load as prepareHatcheryText for every repo file it decides', () => {
    let decided = 0;
    for (const { where, file, text } of files) if (same(where, text, file)) decided++;
    // Most files of the repo are in the common shapes.
    expect(decided).toBeGreaterThan(files.length / 2);
  });

  it('decides no file with a problem, and agrees on edited files (broken targets, names, keys)', () => {
    const rnd = seededRandom(7);
    let decided = 0;
    let undecided = 0;
    for (let round = 0; round < 20; round++) {
      for (const { where, value } of files) {
        if (same(`${where}, edit ${round}`, edited(value as Record<string, unknown>, rnd), 'edited.json'))
          decided++;
        else undecided++;
      }
    }
    expect(decided).toBeGreaterThan(50);
    expect(undecided).toBeGreaterThan(50);
  });

  it('says a JSON object without "nodes" is no hatchery, with the same error as the full first half', () => {
    for (const text of ['{"name": "package", "version": "1.0.0"}', '{}', '{"nodes_": [], "a": {"b": [1]}}']) {
      const quick = quickLoad(text, '/x/package.json');
      const full = prepareHatcheryText(text, '/x/package.json');
      expect(quick?.ok).toBe(false);
      if (quick && !quick.ok && !full.ok) {
        expect(quick.notHatchery).toBe(true);
        expect(full.notHatchery).toBe(true);
        expect(quick.error.message).toBe(full.error.message);
        expect(quick.error.problems).toStrictEqual(full.error.problems);
      }
    }
    // Where the root is not at line 1, column 1, and in YAML, the full first half places it.
    expect(quickLoad('\n  {"name": "x"}', '/x/package.json')).toBeUndefined();
    expect(quickLoad('name: x\n', '/x/other.yaml')).toBeUndefined();
  });

  it('leaves syntax errors, other non-hatcheries and design files to the full first half', () => {
    expect(quickPrepareText('{"name": "x",', 'x.json')).toBeUndefined();
    expect(
      quickPrepareText('{"name": "x", "name": "y", "desc": "d", "nodes": [{"usr_prompt": "p"}]}', 'x.json'),
    ).toBeUndefined();
    expect(quickPrepareText('[{"nodes": []}]', 'list.json')).toBeUndefined();
    // The design's spellings: a `next` path with "::" (design.ts maps it; here it names no node).
    const design =
      '{"name": "d", "desc": "d", "nodes": [{"name": "A", "usr_prompt": "x", "next": "nodes::B"}, {"name": "B", "usr_prompt": "y"}]}';
    expect(prepareHatcheryText(design, 'd.json').ok).toBe(true);
    expect(quickPrepareText(design, 'd.json')).toBeUndefined();
    expect(quickPrepareText('name: x\ndesc: d\nnodes:\n  - usr_prompt: hi\n', 'x.yaml')).toMatchObject({
      def: { name: 'x', nodes: [{ name: 'node_1', usr_prompt: 'hi' }] },
    });
  });
});
