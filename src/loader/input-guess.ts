/**
 * Whether a hatchery needs `input`, read from its validated definition without compiling it: the
 * served tool's `required: ['input']` before the whole-file analysis has run (a deferred start, see
 * mcp/registry.ts). The analysis decides; when it disagrees, the tool is sent again (list_changed).
 */
import type { HatcheryDef } from '../schema/hatchery.js';
import { NODE_KINDS } from '../schema/nodes.js';
import type { ValidNode } from './validate.js';

/** An output tag `{{ … }}` (with `-` trimming) and a block tag `{% … %}`. */
const TAG = /\{\{-?([\s\S]*?)-?\}\}|\{%-?([\s\S]*?)-?%\}/g;
/** A read of ctx.input: `ctx.input`, `ctx["input"]`, `ctx['input']`. */
const READ = /\bctx\s*(?:\.\s*input\b|\[\s*(?:"input"|'input')\s*\])/;
/** A default filter in a tag (`| default(…)`, `| d(…)`): the read is soft. */
const DEFAULTED = /\|\s*(?:default|d)\b/;

/**
 * True when some template of the file reads ctx.input with no default outside a condition on it, or
 * the run starts with a node that reads it (a script without stdin): what the analysis finds in every
 * common case.
 * It does not follow the run (a read on a path after `input` is saved, or never reached).
 */
export function likelyInputRequired(def: HatcheryDef, nodes: readonly ValidNode[], start?: string): boolean {
  if (Object.hasOwn(def.inputs ?? {}, 'input')) return false;
  const first = start === undefined ? nodes[0] : nodes.find((n) => n.name === start);
  if (first && NODE_KINDS[first.kind].readsInput(first.def)) return true;
  for (const n of nodes) if (readsInput(n.def)) return true;
  return false;
}

/** True when some string below `value` reads ctx.input the hard way (see likelyInputRequired). */
function readsInput(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('input') && hardRead(value);
  if (value === null || typeof value !== 'object' || depth > 64) return false;
  if (Array.isArray(value)) return value.some((v) => readsInput(v, depth + 1));
  for (const k in value) if (readsInput((value as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

function hardRead(text: string): boolean {
  // Inside `{% if ctx.input %}` reads are guarded; the analysis calls them soft.
  let guarded = 0;
  for (const m of text.matchAll(TAG)) {
    const out = m[1];
    if (out !== undefined) {
      if (guarded === 0 && READ.test(out) && !DEFAULTED.test(out)) return true;
      continue;
    }
    const block = (m[2] ?? '').trim();
    if (/^if\b/.test(block)) guarded += READ.test(block) || guarded > 0 ? 1 : 0;
    else if (/^endif\b/.test(block) && guarded > 0) guarded--;
  }
  return false;
}
