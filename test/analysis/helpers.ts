/** Helpers of the analysis tests: every problem a user sees for a definition, as `file: path: message` lines. */
import { formatProblem } from '../../src/core/errors.js';
import type { Hatchery } from '../../src/engine/contracts.js';
import { loadHatcheryObject } from '../../src/loader/load.js';

/** The file name problems are reported under. */
export const FILE = 'h.json';

/** Every problem of `def` (errors when it fails to load, else its warnings), as the CLI prints them. */
export function report(def: unknown): string[] {
  const res = loadHatcheryObject(def, '');
  const list = res.ok ? res.hatchery.warnings : res.error.problems;
  return list.map((p) => formatProblem(FILE, p));
}

/** Loads `def`, failing the test with every problem when it does not load. */
export function loaded(def: unknown): Hatchery {
  const res = loadHatcheryObject(def, '');
  if (!res.ok) throw res.error;
  return res.hatchery;
}
