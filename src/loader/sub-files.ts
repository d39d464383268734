import path from 'node:path';
import { isError, type ValidationProblem } from '../core/errors.js';
import { readFailure, readTextCheckedSync } from '../core/fs/safe-fs.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { insideRoots } from '../tools/path-check.js';

/** Most problems of one sub-file repeated in the file that hatches it. */
const MAX_SUB_PROBLEMS = 5;

/** What loading one file gives (load.ts's LoadResult, restated to keep this module below it). */
type Loaded = { ok: true; hatchery: Hatchery } | { ok: false; error: { problems: ValidationProblem[] } };

/** Loads a file's text with the same sub-file checker (load.ts's loadHatcheryText). */
export type TextLoader = (text: string, abs: string, options: LoadOptions, subs: SubFiles) => Loaded;

interface Entry {
  res: Loaded | { ok: false; read: string };
  /** hatch: sub-files that failed, by the path written in this file. */
  failed: { rel: string; abs: string }[];
  /** Every hatch: sub-file this file names (read or not), for the dependencies of the files above. */
  children: Set<string>;
}

/** One problem of a sub-file, with the files it was reached through (as written in each hatch:). */
interface ChainProblem {
  chain: string[];
  path: string;
  message: string;
  fix?: string;
}

/**
 * The hatch: sub-files of one load, checked recursively at load time: read synchronously below the
 * read roots (as a hatch: run confines them), each file once per load (a diamond is loaded once),
 * and a file already being loaded further up is not entered again (a hatchery may hatch itself,
 * bounded at run time by max_depth).
 */
export class SubFiles {
  private readonly entries = new Map<string, Entry>();
  private readonly stack: string[] = [];

  constructor(
    private readonly options: LoadOptions,
    private readonly load: TextLoader,
  ) {}

  /** Marks the top-level file as being loaded, so a sub-file that hatches it back is not entered. */
  enter(abs: string): void {
    this.stack.push(abs);
  }

  /**
   * Checks the sub-file `rel` of the file in `dir` being compiled, reporting its problems through
   * `report` with the chain of files; the loaded hatchery, or undefined (invalid, cyclic or unread).
   */
  check(rel: string, dir: string, report: (message: string, fix?: string) => void): Hatchery | undefined {
    const abs = path.resolve(dir, rel);
    const parent = this.stack[this.stack.length - 1];
    if (parent !== undefined) this.entries.get(parent)?.children.add(abs);
    const ref = `hatch:${rel}`;
    const given = this.options.roots;
    const roots = [...new Set([dir, ...(given?.read ?? [])])];
    if (!insideRoots(abs, roots)) {
      // Without roots (no Runtime) only the file's own folder is read; elsewhere is checked when it runs.
      if (!given) return undefined;
      report(
        `"${ref}": ${abs} is outside the folders runs may read (${roots.join(', ')}); move the file below one of them, or allow its folder with --allow-root DIR`,
      );
      return undefined;
    }
    if (this.stack.includes(abs)) return undefined;
    const entry = this.entry(abs, roots);
    if (entry.res.ok) return entry.res.hatchery;
    const failed = parent === undefined ? undefined : this.entries.get(parent)?.failed;
    if (failed && !failed.some((f) => f.rel === rel)) failed.push({ rel, abs });
    const all = this.chains(abs, new Set());
    for (const c of all.slice(0, MAX_SUB_PROBLEMS)) {
      const where = c.path ? `${c.path}: ` : '';
      report(`${ref} is invalid: ${[rel, ...c.chain].join(' → ')}: ${where}${c.message}`, c.fix);
    }
    if (all.length > MAX_SUB_PROBLEMS)
      report(`${ref} is invalid: and ${all.length - MAX_SUB_PROBLEMS} more problems`);
    return undefined;
  }

  private entry(abs: string, roots: string[]): Entry {
    const hit = this.entries.get(abs);
    if (hit) return hit;
    const entry: Entry = { res: { ok: false, read: '' }, failed: [], children: new Set() };
    this.entries.set(abs, entry);
    let text: string;
    try {
      text = readTextCheckedSync(abs, (real) => {
        if (!insideRoots(real, roots)) throw new Error(`its real path ${real} is outside the allowed roots`);
      });
    } catch (err) {
      entry.res = { ok: false, read: readFailure(err) };
      return entry;
    }
    this.stack.push(abs);
    try {
      entry.res = this.load(text, abs, this.options, this);
    } finally {
      this.stack.pop();
    }
    return entry;
  }

  /**
   * Every file below the sub-file `abs` (its own sub-files, theirs...): a change to any of them can
   * change whether the file that hatches `abs` is valid, so hot reload watches them all.
   */
  below(abs: string): string[] {
    const found = new Set<string>();
    const visit = (f: string) => {
      for (const c of this.entries.get(f)?.children ?? []) {
        if (found.has(c)) continue;
        found.add(c);
        visit(c);
      }
    };
    visit(abs);
    return [...found];
  }

  /** The problems of a failed sub-file, those of its own sub-files followed down with their chain. */
  private chains(abs: string, seen: Set<string>): ChainProblem[] {
    const entry = this.entries.get(abs);
    if (!entry || entry.res.ok || seen.has(abs)) return [];
    seen.add(abs);
    const res = entry.res;
    if ('read' in res) return [{ chain: [], path: '', message: `cannot read the file: ${res.read}` }];
    const derived = entry.failed.map((f) => `hatch:${f.rel} is invalid: `);
    const own = res.error.problems
      // A failed file also lists its warnings; only what fails it is repeated in the parent.
      .filter((p) => isError(p) && !derived.some((d) => p.message.startsWith(d)))
      // The sub-file's position is left out: the parent's problem is placed in the parent's file.
      .map((p) => ({ chain: [], path: p.path, message: p.message, fix: p.fix }));
    const deeper = entry.failed.flatMap((f) =>
      this.chains(f.abs, seen).map((c) => ({ ...c, chain: [f.rel, ...c.chain] })),
    );
    return [...own, ...deeper];
  }
}
