import { HatcheryError } from '../core/errors.js';
import type { PathGuard } from '../core/fs/paths.js';
import { readFailure } from '../core/fs/safe-fs.js';
import type { Hatchery } from '../engine/contracts.js';
import { kindSpec } from '../schema/nodes.js';
import { didYouMean, promptLabel, quote } from '../schema/suggest.js';

/**
 * Copies declared inputs into ctx; unknown names and missing inputs are errors listing them all.
 * Only the file's own declared names count: "constructor" or "__proto__" are refused like any undeclared name.
 */
export function applyVars(
  h: Hatchery,
  ctx: Record<string, unknown>,
  vars: Readonly<Record<string, string>> | undefined,
): void {
  const declared = h.inputs;
  if (vars) {
    for (const [k, v] of Object.entries(vars)) {
      if (!Object.hasOwn(declared, k)) {
        const names = Object.keys(declared);
        throw new HatcheryError(
          'MISSING_INPUT',
          `${quote(k)} is not a declared input of ${h.name}${didYouMean(k, names)}; declared inputs: ${names.length ? names.join(', ') : '(none)'}`,
          { file: h.file, field: 'inputs', input: k.slice(0, 60) },
        );
      }
      ctx[k] = v;
    }
  }
  const missing = Object.keys(declared).filter((k) => ctx[k] === undefined);
  if (missing.length > 0) {
    throw new HatcheryError(
      'MISSING_INPUT',
      `missing input${missing.length > 1 ? 's' : ''}: ${missing.map((k) => `${k} (${declared[k]})`).join(', ')}; pass ${missing.map((k) => `--set ${k}=...`).join(' ')} on the command line, or the same names as tool arguments`,
      { file: h.file, field: 'inputs', inputs: missing },
    );
  }
}

/**
 * Refuses a run without input of a hatchery that cannot do without it (a template on a path from
 * its start reads ctx.input with no default), before any node runs, naming what the input is.
 */
export function requireInput(h: Hatchery, input: string | undefined): void {
  if (input !== undefined || !h.inputRequired) return;
  // A node that reads the input itself (a script's stdin) runs without one (empty stdin).
  const first = h.nodes.get(h.start);
  if (first && kindSpec(first.kind)?.readsInput(h.def.nodes[first.index] as Record<string, unknown>)) return;
  const what = h.def.input_prompt ? `: ${promptLabel(h.def.input_prompt)}` : '';
  throw new HatcheryError(
    'MISSING_INPUT',
    `${h.name} needs its input ({{ ctx.input }}${what}) and none was given; pass --input TEXT or pipe it on stdin (echo "..." | hatchery-mcp run FILE), run it on a terminal to be asked, or give the tool's "input" argument`,
    { file: h.file, field: 'input' },
  );
}

/** Reads every `files` entry concurrently into ctx. */
export async function loadFiles(
  h: Hatchery,
  guard: PathGuard,
  ctx: Record<string, unknown>,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(
    Object.keys(h.files).map(async (key) => {
      const rel = h.files[key]!;
      const where = { file: h.file, field: `files/${key}` };
      try {
        ctx[key] = await guard.readText(h.dir, rel, where, { signal });
      } catch (err) {
        if (err instanceof HatcheryError) throw err;
        throw new HatcheryError('FILE_IO', `cannot read "${rel}": ${readFailure(err)}`, where, {
          cause: err,
        });
      }
    }),
  );
}
