import path from 'node:path';
import type { Tool } from '@modelcontextprotocol/server';
import type { ValidationError, ValidationProblem } from '../core/errors.js';
import type { LoadOptions } from '../engine/contracts.js';
import { isHatcheryFileName, listHatcheryFileNames } from '../loader/file-names.js';
import { IGNORE_FILE, IgnoreRules, ignoreRulesOf } from '../loader/ignore.js';
import {
  changedTools,
  completeEntry,
  emptyChange,
  entryOf,
  importFirstHalf,
  importLoader,
  type ListedEntry,
  type LoadResult,
  loadText,
  nameOf,
  type PendingEntry,
  type RegistryChange,
  type RegistryEntry,
  readText,
} from './registry-entries.js';

export type { ListedEntry, RegistryChange, RegistryEntry } from './registry-entries.js';
export { changedTools, importLoader } from './registry-entries.js';

/** State of one hatchery file: the tool it serves (kept while a later edit is broken) and its last error. */
interface FileState {
  served?: string;
  error?: string;
  /** The problems of a file that fails validation (for pages that show them by line). */
  problems?: ValidationProblem[];
  /** The text last loaded (the watcher's catch-up tells an edit from a write before the load). */
  text?: string;
}

/**
 * The hatcheries served from one folder: name → entry, shared by every MCP session. A file that fails
 * to load never replaces the last good version of its tool; a second file claiming a name already
 * served is refused with an error naming both files.
 */
export class HatcheryRegistry {
  /** Absolute path of the served folder. */
  readonly dir: string;
  private readonly byName = new Map<string, RegistryEntry | PendingEntry>();
  /** Listed files whose load is not complete yet, by name, in sorted order (see loadAll's `defer`). */
  private readonly pending = new Map<string, PendingEntry>();
  /** The load errors of files withdrawn when their deferred load failed, by the name they were listed as. */
  private readonly withdrawn = new Map<string, { file: string; error: ValidationError }>();
  /**
   * Told of what completing a deferred load changed outside a refresh: a file withdrawn (its error
   * in `problems`) or its tool sent again (the analysis disagreed on `required: ['input']`).
   */
  onSettled: ((change: RegistryChange) => void) | undefined;
  private readonly files = new Map<string, FileState>();
  private toolList: Tool[] | undefined;
  /** The folder's `.hatcheryignore` patterns, read by loadAll and again when that file changes. */
  private ignore = new IgnoreRules('');

  /** The hatchery files the folder holds now, by name (ignore rules applied), as loadAll lists them. */
  listFiles(): Promise<string[]> {
    return listHatcheryFileNames(this.dir, this.ignore);
  }

  constructor(
    dir: string,
    private readonly options: {
      /** Load options; a server sets them once its runtime is built (see setLoadOptions). */
      load?: LoadOptions;
      /** Names taken by the server's own tools. */
      reserved?: ReadonlySet<string>;
    } = {},
  ) {
    this.dir = path.resolve(dir);
  }

  /** Sets the options later loads use (a server's runtime, built after its first answer, gives them). */
  setLoadOptions(load: LoadOptions): void {
    this.options.load = load;
  }

  /**
   * The entry serving `name`, if any; a file listed from a deferred start completes its load first,
   * and is withdrawn if that fails (`failure` then gives its error).
   */
  get(name: string): RegistryEntry | undefined {
    const e = this.byName.get(name);
    if (e && !e.hatchery) this.settleSome(Number.POSITIVE_INFINITY, [e]);
    return this.byName.get(name) as RegistryEntry | undefined;
  }

  /** The load error of `name` when its file was listed and then withdrawn because its load failed. */
  failure(name: string): ValidationError | undefined {
    return this.withdrawn.get(name)?.error;
  }

  /** Every served entry, sorted by name (deferred loads are completed first). */
  entries(): RegistryEntry[] {
    this.settleSome();
    return this.listed() as RegistryEntry[];
  }

  /** Every listed entry, sorted by name, loaded completely or not (names, texts, tools). */
  listed(): ListedEntry[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** How many listed files still wait for the second half of their load. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Completes deferred loads (`which`, by default every one) in name order for about `budgetMs`
   * (at least one), so a caller can spread them over event-loop turns; returns how many are left.
   */
  settleSome(
    budgetMs = Number.POSITIVE_INFINITY,
    which: Iterable<PendingEntry> = this.pending.values(),
  ): number {
    const until = performance.now() + budgetMs;
    const change = emptyChange();
    for (const e of which) {
      this.settle(e, change);
      if (performance.now() >= until) break;
    }
    if (changedTools(change)) this.toolList = undefined;
    if (changedTools(change) || change.problems.length > 0) this.onSettled?.(change);
    return this.pending.size;
  }

  /**
   * The second half of a deferred load: the file is served with its compiled hatchery (its tool
   * sent again when the analysis disagrees with the first half's guess), or withdrawn with its error.
   */
  private settle(e: PendingEntry, change: RegistryChange): void {
    this.pending.delete(e.name);
    const res = completeEntry(e, this.options.load);
    const state = this.files.get(e.file);
    if (this.byName.get(e.name) !== e || !state) return;
    if (!res.ok) {
      this.byName.delete(e.name);
      state.served = undefined;
      state.error = res.error.message;
      state.problems = res.error.problems;
      this.withdrawn.set(e.name, { file: e.file, error: res.error });
      change.removed.push(e.name);
      change.problems.push(res.error.message);
      return;
    }
    if (res.requiredChanged) change.updated.push(e.name);
    this.byName.set(e.name, res.entry);
  }

  /** The MCP tools of every listed hatchery (cached until the next change). */
  tools(): Tool[] {
    this.toolList ??= this.listed().map((e) => e.tool);
    return this.toolList;
  }

  /** The entry whose definition resource URI (or, with `graphUri`, flowchart resource URI) is `uri`. */
  byUri(uri: string, key: 'uri' | 'graphUri' = 'uri'): RegistryEntry | undefined {
    for (const e of this.byName.values()) if (e[key] === uri) return this.get(e.name);
    return undefined;
  }

  /** Current load errors, one message per failing file. */
  problems(): string[] {
    return [...this.files.values()].flatMap((s) => (s.error ? [s.error] : []));
  }

  /** The files that currently fail validation, each with its problems (path, line, message), by file. */
  fileProblems(): { file: string; problems: ValidationProblem[] }[] {
    return [...this.files]
      .flatMap(([file, s]) => (s.problems ? [{ file, problems: s.problems }] : []))
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }

  /** Every file the registry loaded (served, failing or refused). */
  loadedFiles(): string[] {
    return [...this.files.keys()];
  }

  /** The text a file had when it was last loaded (served or failing), if it was. */
  loadedText(file: string): string | undefined {
    return this.files.get(file)?.text;
  }

  /**
   * Every file the served hatcheries depend on (hatch: targets, files entries, js: modules); of the
   * files whose deferred load has completed, unless `all` completes them first.
   */
  dependencies(all = false): Set<string> {
    if (all) this.settleSome();
    const deps = new Set<string>();
    for (const e of this.byName.values())
      if (e.hatchery) for (const d of e.hatchery.dependencies) deps.add(d);
    return deps;
  }

  /**
   * True for a `*.json`, `*.yaml` or `*.yml` file below the folder that listHatcheryFileNames would list
   * by its path (not in node_modules or a dot-folder, not excluded by `.hatcheryignore`).
   */
  isHatcheryFile(abs: string): boolean {
    if (!isHatcheryFileName(abs)) return false;
    const rel = path.relative(this.dir, abs);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return false;
    if (rel.split(path.sep).some((part) => part.startsWith('.') || part === 'node_modules')) return false;
    return !this.ignore.ignores(rel.split(path.sep).join('/'));
  }

  /**
   * Loads every hatchery file of the folder (first file wins a duplicate name, in sorted order). With
   * `defer`, each file is only parsed and validated, and listed with the tool that gives; its compile
   * and analysis come when it is first used (get), or from settleSome, and a file that fails them
   * is withdrawn then (onSettled). A file broken at parse or schema level is never listed either way.
   */
  async loadAll(options: { defer?: boolean } = {}): Promise<RegistryChange> {
    this.ignore = await ignoreRulesOf(this.dir);
    // Names only: each file is read once, by the load, which skips files that are no hatchery.
    const files = await listHatcheryFileNames(this.dir, this.ignore);
    if (!options.defer || this.files.size > 0) return this.refresh(files);
    // Listed from their first half only: the compiling half is imported after the answer.
    await importFirstHalf();
    const change = emptyChange();
    this.reload(files, new Set(files), change, true);
    if (changedTools(change)) this.toolList = undefined;
    return change;
  }

  /**
   * Reloads the given paths (added, changed or deleted), every served hatchery that depends on
   * them (transitively), and every file that failed before (it may have waited for one of them).
   */
  async refresh(paths: Iterable<string>): Promise<RegistryChange> {
    await importLoader();
    const change = emptyChange();
    // Dependencies below are those of complete loads: deferred ones complete first.
    for (const e of this.pending.values()) this.settle(e, change);
    const direct = new Set<string>();
    const targets = new Set<string>();
    const queue = [...paths].map((p) => path.resolve(p));
    if (queue.includes(path.join(this.dir, IGNORE_FILE))) {
      // New patterns: files they now exclude stop being served, files they let go of are loaded.
      this.ignore = await ignoreRulesOf(this.dir);
      const listed = await listHatcheryFileNames(this.dir, this.ignore);
      for (const f of this.files.keys()) if (!this.isHatcheryFile(f)) this.remove(f, change);
      queue.push(...listed.filter((f) => !this.files.has(f)));
    }
    const seen = new Set<string>();
    while (queue.length > 0) {
      const p = queue.shift()!;
      if (seen.has(p)) continue;
      seen.add(p);
      if (this.isHatcheryFile(p)) {
        targets.add(p);
        direct.add(p);
      }
      for (const e of this.byName.values()) {
        if (e.hatchery?.dependencies.includes(p) && !targets.has(e.file)) {
          targets.add(e.file);
          queue.push(e.file);
        }
      }
    }
    for (const [file, state] of this.files) if (state.error) targets.add(file);
    this.reload([...targets].sort(), direct, change);
    // A deletion or rename can free a name that a refused duplicate was waiting for.
    for (let round = 0; round < 3 && change.removed.length > 0; round++) {
      const waiting = [...this.files].filter(([, s]) => s.error && !s.served).map(([f]) => f);
      if (waiting.length === 0) break;
      const before = change.added.length;
      // Not direct: an error already reported in this refresh is not reported twice.
      this.reload(waiting.sort(), new Set(), change);
      if (change.added.length === before) break;
    }
    // A name let go of and taken again in one refresh (two files swapping names) was updated.
    const again = new Set(change.removed.filter((n) => change.added.includes(n)));
    if (again.size > 0) {
      change.removed = change.removed.filter((n) => !again.has(n));
      change.added = change.added.filter((n) => !again.has(n));
      change.updated.push(...again);
    }
    if (changedTools(change)) this.toolList = undefined;
    return change;
  }

  /**
   * Reloads files: deletions first, then every file that now defines another name lets go of its
   * old one, and only then are names claimed; so names freed in the same save (a rename, two files
   * swapping names) can be taken, and a file refused for a duplicate name serves nothing, as its
   * error says.
   */
  private reload(files: string[], direct: Set<string>, change: RegistryChange, defer = false): void {
    const loaded: [string, string, LoadResult][] = [];
    for (const f of files) {
      // Read synchronously: the load that follows is synchronous anyway, and a promise per file cost
      // 5-6 times the CPU of a readFileSync loop (46-62 ms against 7-10 ms at 1,000 files at start).
      const text = readText(f);
      if (text === undefined) this.remove(f, change);
      else loaded.push([f, text, loadText(f, text, defer, this.options.load)]);
    }
    for (const [f, , res] of loaded) {
      const served = this.files.get(f)?.served;
      if (res.ok && served !== undefined && served !== nameOf(res)) this.unserve(f, change);
    }
    for (const [f, text, res] of loaded) this.load(f, text, res, direct.has(f), change);
  }

  /** Stops serving the name a file served (it defines another one now, or is gone), if it still does. */
  private unserve(file: string, change: RegistryChange): void {
    const state = this.files.get(file);
    const name = state?.served;
    if (!state || !name) return;
    if (this.byName.get(name)?.file === file) {
      this.byName.delete(name);
      this.pending.delete(name);
      change.removed.push(name);
    }
    state.served = undefined;
  }

  private remove(file: string, change: RegistryChange): void {
    this.unserve(file, change);
    if (!this.files.delete(file)) return;
    for (const [name, w] of this.withdrawn) if (w.file === file) this.withdrawn.delete(name);
  }

  private load(file: string, text: string, res: LoadResult, direct: boolean, change: RegistryChange): void {
    const state = this.files.get(file) ?? {};
    this.files.set(file, state);
    state.text = text;
    const fail = (message: string, problems?: ValidationProblem[]) => {
      // Retried files report an error again only when it changed, so the log is not flooded.
      if (direct || state.error !== message) change.problems.push(message);
      state.error = message;
      state.problems = problems;
    };
    if (!res.ok && res.notHatchery) {
      // Another JSON or YAML file (package.json, a test file): not a hatchery, so nothing to report.
      this.remove(file, change);
      return;
    }
    if (!res.ok) {
      fail(res.error.message, res.error.problems);
      return;
    }
    const h = { name: nameOf(res) };
    if (this.options.reserved?.has(h.name)) {
      fail(
        `${file}: name "${h.name}" is taken by the server's own tool of that name; rename the hatchery (or start the server with --no-generic-tools)`,
      );
      return;
    }
    const owner = this.byName.get(h.name);
    if (owner && owner.file !== file) {
      fail(
        `${file}: name "${h.name}" is already used by ${owner.file}; rename one of them (this file is not served until then)`,
      );
      return;
    }
    state.error = undefined;
    state.problems = undefined;
    for (const [name, w] of this.withdrawn)
      if (w.file === file || name === h.name) this.withdrawn.delete(name);
    if (state.served !== h.name) this.unserve(file, change);
    const entry = entryOf(file, text, res);
    this.byName.set(h.name, entry);
    if (!entry.hatchery) this.pending.set(h.name, entry);
    state.served = h.name;
    if (!owner) change.added.push(h.name);
    else change.updated.push(h.name);
  }
}
