import { describe, expect, it } from 'vitest';
import { fromDesign, isDesign } from '../../src/loader/design.js';
import { loadHatcheryText } from '../../src/loader/load.js';
import { applyAliases, stripMeta, validateDefinition } from '../../src/loader/validate.js';
import {
  FAST_NODE_FIELDS,
  FAST_TOP_FIELDS,
  fastCheck,
  fastKind,
  fastNode,
  fastTop,
} from '../../src/schema/fast-check.js';
import { hatcheryAliases, hatcheryTopSchema } from '../../src/schema/hatchery.js';
import { NODE_KINDS, type NodeKind, TYPE_TO_KIND } from '../../src/schema/nodes.js';
import { seededRandom } from '../helpers.js';
import { corpus } from './corpus.js';

/**
 * The start-up's hand-written check (schema/fast-check.ts) must either give exactly zod's output or
 * say it cannot decide: it never accepts what zod rejects, and never gives another value. Checked on
 * every hatchery file of the repo (fixtures, hatchery/, the docs' examples) and on seeded random
 * mutations of their top levels and nodes (wrong types, unknown and prototype keys, missing fields,
 * extra nesting), with the objects the loader gives the schemas ($/_ keys dropped, aliases renamed).
 */
const JITLESS = { jitless: true } as const;

/** The top level and nodes as validateDefinition hands them to the schemas. */
function schemaInputs(raw: unknown): { top: Record<string, unknown>; nodes: [NodeKind, unknown][] } {
  const value = isDesign(raw) ? fromDesign(raw as Record<string, unknown>, 'x.json').value : raw;
  const stripped = stripMeta(value) as Record<string, unknown>;
  const top = applyAliases(stripped, hatcheryAliases, '', []).obj;
  const nodes: [NodeKind, unknown][] = [];
  for (const n of Array.isArray(top.nodes) ? top.nodes : []) {
    if (n === null || typeof n !== 'object' || Array.isArray(n)) continue;
    const type = (n as { type?: unknown }).type;
    const kind = type === undefined ? 'drone' : typeof type === 'string' ? TYPE_TO_KIND.get(type) : undefined;
    if (kind)
      nodes.push([kind, applyAliases(n as Record<string, unknown>, NODE_KINDS[kind].aliases, '', []).obj]);
  }
  return { top, nodes };
}

let decided = 0;
let undecided = 0;

/** The property: undecided, or zod accepts and gives the same value with keys in the same order. */
function agree(what: string, fast: unknown, zod: { success: boolean; data?: unknown }): void {
  if (fast === undefined) {
    undecided++;
    return;
  }
  decided++;
  expect(zod.success, `${what}: the fast check accepted what zod rejects`).toBe(true);
  expect(fast, what).toStrictEqual(zod.data);
  expect(JSON.stringify(fast), what).toBe(JSON.stringify(zod.data));
}

function checkTop(what: string, top: unknown): void {
  agree(what, fastTop(top), hatcheryTopSchema.safeParse(top, JITLESS));
}

function checkNode(what: string, kind: NodeKind, node: unknown): void {
  agree(what, fastNode(kind, node), NODE_KINDS[kind].schema.safeParse(node, JITLESS));
}

const WEIRD: unknown[] = [
  '',
  'x',
  'END',
  'a b',
  '__proto__',
  'constructor',
  0,
  -1,
  1,
  1.5,
  2,
  2.5,
  99,
  100,
  2 ** 60,
  Number.POSITIVE_INFINITY,
  Number.NaN,
  true,
  false,
  null,
  undefined,
  [],
  [''],
  ['x'],
  ['x', 1],
  [['x']],
  {},
  { a: 'x' },
  { a: 1 },
  { 'a b': 'x' },
  { '1': 'x' },
  { 'a=b': 'x' },
  JSON.parse('{"__proto__": "x"}'),
  JSON.parse('{"constructor": "x"}'),
  { nested: { deep: [1, 'x', null, { n: Number.POSITIVE_INFINITY }] } },
  Object.create(null),
  new Date(0),
  'http://localhost:1234/v1',
  'fail',
  'continue',
  'choose',
  'tool',
  'drone',
  'script',
];

/** A value in a failure message (some have no prototype). */
const show = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return typeof v;
  }
};

/** Keys a mutation may set: the known ones of either list, a few unknown, and prototype names. */
const KEYS = [
  ...new Set([
    ...FAST_TOP_FIELDS.map((f) => f[0]),
    ...Object.values(FAST_NODE_FIELDS)
      .flat()
      .map((f) => f[0]),
  ]),
  'unknown_key',
  '$schema',
  '_comment',
  'description',
  'input',
  'user_prompt',
  'system_message',
  'tool',
  '__proto__',
  'constructor',
  'toString',
];

/** A copy of `obj` (same prototype) with one to three random edits. */
function mutate(obj: Record<string, unknown>, rnd: () => number): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(obj));
  for (const k of Object.keys(obj)) out[k] = obj[k];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const edits = 1 + Math.floor(rnd() * 3);
  for (let e = 0; e < edits; e++) {
    const own = Object.keys(out);
    const r = rnd();
    if (r < 0.35)
      Object.defineProperty(out, pick(KEYS), {
        value: pick(WEIRD),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else if (r < 0.55 && own.length > 0) out[pick(own)] = pick(WEIRD);
    else if (r < 0.7 && own.length > 0) delete out[pick(own)];
    else if (r < 0.85 && own.length > 0) {
      const k = pick(own);
      out[k] = rnd() < 0.5 ? [out[k]] : { x: out[k] };
    } else if (own.length > 0) {
      // An edit one level down: in a record, an array or a nested value.
      const k = pick(own);
      const v = out[k];
      if (Array.isArray(v)) out[k] = [...v, pick(WEIRD)];
      else if (v && typeof v === 'object')
        out[k] = { ...(v as object), [pick(['a', '1', 'a b', 'constructor', 'x'])]: pick(WEIRD) };
    }
  }
  return out;
}

describe('the fast schema check', () => {
  const files = corpus();

  it('lists the keys of each schema in its order, required where zod requires them', () => {
    const same = (
      fields: readonly (readonly [string, unknown, true?])[],
      shape: Record<string, { _zod: { optin?: string } }>,
    ) => {
      expect(fields.map((f) => f[0])).toEqual(Object.keys(shape));
      for (const [key, , required] of fields)
        expect(required === true, key).toBe(shape[key]!._zod.optin === undefined);
    };
    same(FAST_TOP_FIELDS, hatcheryTopSchema.shape as never);
    for (const kind of Object.keys(NODE_KINDS) as NodeKind[])
      same(FAST_NODE_FIELDS[kind]!, NODE_KINDS[kind].schema.shape as never);
  });

  it('agrees with zod on every hatchery file of the repo, and decides the common ones', () => {
    expect(files.length).toBeGreaterThan(30);
    decided = 0;
    undecided = 0;
    for (const { where, value } of files) {
      const { top, nodes } = schemaInputs(value);
      checkTop(where, top);
      for (const [i, [kind, node]] of nodes.entries()) checkNode(`${where} nodes/${i}`, kind, node);
    }
    // Most files use only what the fast check knows; the rest (spawn, budget, base_url...) go to zod.
    expect(decided).toBeGreaterThan(4 * undecided);
  });

  it('never accepts what zod rejects, nor gives another value, on random mutations', () => {
    const rnd = seededRandom(15);
    decided = 0;
    undecided = 0;
    const inputs = files.map(({ value }) => schemaInputs(value));
    for (let round = 0; round < 40; round++) {
      for (const { top, nodes } of inputs) {
        checkTop(`top, round ${round}`, mutate(top, rnd));
        for (const [kind, node] of nodes) {
          const m = mutate(node as Record<string, unknown>, rnd);
          checkNode(`${kind}, round ${round}`, kind, m);
          // The same object checked as another kind: a type-confused node.
          checkNode(
            `${kind} as other, round ${round}`,
            (Object.keys(NODE_KINDS) as NodeKind[])[round % 7]!,
            m,
          );
        }
      }
    }
    // Both answers occur: the mutations reach past the first check.
    expect(decided).toBeGreaterThan(100);
    expect(undecided).toBeGreaterThan(100);
  });

  it('gives the loader the same definition, nodes and problems as zod alone, on files and their mutations', () => {
    const rnd = seededRandom(1515);
    const both = (what: string, raw: unknown) => {
      const fast = validateDefinition(raw);
      fastCheck.enabled = false;
      try {
        expect(fast, what).toStrictEqual(validateDefinition(raw));
      } finally {
        fastCheck.enabled = true;
      }
    };
    for (const { where, value } of files) {
      both(where, value);
      for (let round = 0; round < 25; round++) {
        const top = mutate(value as Record<string, unknown>, rnd);
        both(`${where}, top mutated in round ${round}`, top);
        const list = (value as { nodes: unknown }).nodes;
        if (!Array.isArray(list) || list.length === 0) continue;
        const i = Math.floor(rnd() * list.length);
        const node = list[i];
        const nodes = [...list];
        nodes[i] = node && typeof node === 'object' ? mutate(node as Record<string, unknown>, rnd) : node;
        both(`${where}, node ${i} mutated in round ${round}`, { ...(value as object), nodes });
      }
    }
  });

  it('reports a number out of range in tool_args (found by the mutations: describing it recursed forever)', () => {
    const res = loadHatcheryText(
      '{"name": "x", "desc": "d", "nodes": [{"type": "tool", "tool_name": "echo", "tool_args": {"text": [1e400]}}]}',
      'x.json',
    );
    expect(res.ok).toBe(false);
    if (!res.ok)
      expect(res.error.problems).toEqual([
        expect.objectContaining({
          path: 'nodes/0/tool_args/text/0',
          message: expect.stringMatching(/not the number Infinity$/),
        }),
      ]);
  });

  it('maps each type to its kind as the loader does', () => {
    for (const [type, kind] of TYPE_TO_KIND) expect(fastKind(type)).toBe(kind);
    expect(fastKind(undefined)).toBe('drone');
    for (const t of ['', 'nope', 'toString', '__proto__', 1, null]) expect(fastKind(t)).toBeUndefined();
  });

  it('agrees with zod on every field of every kind set to each odd value', () => {
    const minimal: Record<NodeKind, Record<string, unknown>> = {
      drone: { usr_prompt: 'x' },
      baneling: { type: 'tool', tool_name: 'echo' },
      script: { type: 'script', cmd: ['cat'] },
      parallel: { type: 'parallel', branches: ['A'] },
      map: { type: 'map', items: 'x', node: 'A' },
      loop: { type: 'loop', body: 'A', until: 'done' },
      ask: { type: 'ask', question: 'q' },
    };
    decided = 0;
    const values = [...WEIRD, 3, 0.5, 101, 'ai', 'baneling', 'match', 'a.b-c', 'a_b', 'a=b', 'x'.repeat(65)];
    for (const kind of Object.keys(minimal) as NodeKind[]) {
      checkNode(`${kind} minimal`, kind, minimal[kind]);
      for (const [key] of FAST_NODE_FIELDS[kind]!)
        for (const v of values)
          checkNode(`${kind}.${key} = ${show(v)}`, kind, { ...minimal[kind], [key]: v });
    }
    const top = { name: 'x', desc: 'd', nodes: [{}] };
    checkTop('top minimal', top);
    for (const [key] of FAST_TOP_FIELDS)
      for (const v of values) checkTop(`top.${key} = ${show(v)}`, { ...top, [key]: v });
    expect(decided).toBeGreaterThan(300);
  });

  it('leaves non-objects and prototype tricks to zod', () => {
    for (const v of [null, 1, 'x', [], [{}], new Map()]) {
      expect(fastTop(v)).toBeUndefined();
      expect(fastNode('drone', v)).toBeUndefined();
    }
    expect(fastNode('drone', JSON.parse('{"usr_prompt": "x", "__proto__": {"model": "m"}}'))).toBeUndefined();
    expect(
      fastNode('drone', { usr_prompt: 'x', output_schema: JSON.parse('{"__proto__": {}}') }),
    ).toBeUndefined();
    expect(fastNode('nope', { usr_prompt: 'x' })).toBeUndefined();
    expect(fastNode('toString', { usr_prompt: 'x' })).toBeUndefined();
  });
});
