import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { type ErrorContext, HatcheryError } from '../errors.js';
import { isCodeFile, localImports } from './module-graph.js';
import { isInside, realish } from './safe-fs.js';

/** Why a protected folder is protected, quoted in every refusal. */
const WHY_PROTECTED =
  'a run may not change the folder hatcheries are loaded from: a model could plant a tool';

/** A file the process was started with (a flag's value), which runs must never change. */
export interface CommandLineFile {
  /** The file, as given or absolute. */
  file: string;
  /** The flag that named it, e.g. `--mcp-config`. */
  flag: string;
}

/** How the write policy of a Runtime is set up. */
export interface WritePolicyOptions {
  /** The default write root (the process's working folder); never used when it is `/` or the home folder. */
  cwd?: string;
  /** --allow-root folders: read and write roots. */
  allowRoots?: readonly string[];
  /** --allow-write folders: write roots that also lift the protection of a protected folder they are in. */
  allowWrite?: readonly string[];
  /** Served folders: protected, and no hatchery file (`*.json`, `*.yaml`, `*.yml` the server would load) is ever written in them. */
  protectedDirs?: readonly string[];
  /** Files given on the command line (--mcp-config, --prices, ...): never written. */
  protectedFiles?: readonly CommandLineFile[];
}

/**
 * True for a `*.json`, `*.yaml` or `*.yml` file below `dir` that a served folder could load (the
 * MCP registry's rule, in any letter case, and whatever .hatcheryignore says: it may change).
 */
export function isServedHatcheryFile(abs: string, dir: string): boolean {
  if (!/\.(?:json|ya?ml)$/i.test(abs)) return false;
  const rel = path.relative(dir, abs);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return false;
  return !rel.split(path.sep).some((part) => part.startsWith('.') || part === 'node_modules');
}

/** The process folder as the default write root, unless it is a filesystem root or the home folder. */
function defaultRoot(cwd: string): string | undefined {
  const abs = path.resolve(cwd);
  if (path.parse(abs).root === abs) return undefined;
  if (abs === path.resolve(homedir())) return undefined;
  return abs;
}

/**
 * Where the runs of one Runtime may write. Write roots: the working folder, --allow-root and
 * --allow-write folders. Carved out of them: protected folders (served folders, and the folder of
 * every hatchery file run or loaded), unless an --allow-write folder is that folder or inside it;
 * and, always, hatchery files: served `*.json`/`*.yaml`/`*.yml`, loaded hatchery files and what they depend on,
 * and what the server loads at its next start: files given on the command line, the local import graph
 * of every loaded js: module, and node_modules, package.json and .env* below any write root.
 * Grows as hatcheries are loaded; never shrinks.
 */
export class WritePolicy {
  /** Write roots as given (absolute), for messages. */
  readonly roots: readonly string[];
  /** The working folder, when it is a write root. */
  readonly defaultRoot: string | undefined;
  private readonly realRoots: string[];
  private readonly optIns: string[];
  private readonly served = new Set<string>();
  private readonly hatcheryDirs = new Set<string>();
  private readonly files = new Set<string>();
  private readonly fileSources: (() => Iterable<string>)[] = [];
  /** State folders (run journals): never writable, not even with --allow-write. */
  private readonly sealed = new Set<string>();
  /** Files given on the command line (real path), with the flag and value that named them. */
  private readonly cliFiles = new Map<string, string>();
  /** Files in the import graph of a loaded js: module (real path), with that module. */
  private readonly imported = new Map<string, string>();
  /** js: modules whose import graph was asked for, and the walks not finished yet. */
  private readonly walked = new Set<string>();
  private readonly walking = new Set<Promise<void>>();

  constructor(o: WritePolicyOptions = {}) {
    this.defaultRoot = defaultRoot(o.cwd ?? process.cwd());
    const roots = [
      ...(this.defaultRoot ? [this.defaultRoot] : []),
      ...(o.allowRoots ?? []),
      ...(o.allowWrite ?? []),
    ].map((r) => path.resolve(r));
    this.roots = [...new Set(roots)];
    this.realRoots = this.roots.map(realish);
    this.optIns = (o.allowWrite ?? []).map((r) => realish(path.resolve(r)));
    for (const d of o.protectedDirs ?? []) this.protectServed(d);
    for (const f of o.protectedFiles ?? [])
      this.cliFiles.set(realish(path.resolve(f.file)), `${f.flag} ${f.file}`);
  }

  /**
   * Protects the local files the js: module `entry` imports, found asynchronously (once per load:
   * writes wait for it through `settled`). The graph only grows: a file once imported stays protected.
   */
  protectModule(entry: string): void {
    this.walked.add(entry);
    const walk: Promise<void> = localImports(entry)
      .then((found) => {
        for (const [file, by] of found) if (!this.imported.has(file)) this.imported.set(file, by);
      })
      .finally(() => this.walking.delete(walk));
    this.walking.add(walk);
  }

  /**
   * Undefined when every js: module known so far (loaded, or a served hatchery's dependency) has its
   * import graph found; else a promise of that. A write awaits it before its checks.
   */
  settled(): Promise<void> | undefined {
    for (const source of this.fileSources) {
      for (const f of source()) if (isCodeFile(f) && !this.walked.has(f)) this.protectModule(f);
    }
    if (this.walking.size === 0) return undefined;
    return Promise.all(this.walking).then(() => undefined);
  }

  /** Protects a served folder; `files` lists more files runs must never change (the served ones' dependencies). */
  protectServed(dir: string, files?: () => Iterable<string>): void {
    this.served.add(realish(path.resolve(dir)));
    if (files) this.fileSources.push(files);
  }

  /**
   * Seals the run store's folder: no run writes there or works there, whatever --allow-write says
   * (a run that could write its journal could forge what it did, or another run's answers).
   */
  protectState(dir: string): void {
    this.sealed.add(realish(path.resolve(dir)));
  }

  /** Throws PATH_DENIED when `real` is inside a sealed state folder. */
  private checkSealed(real: string, p: string, abs: string, where: ErrorContext, what: string): void {
    for (const dir of this.sealed) {
      if (!isInside(real, dir)) continue;
      throw new HatcheryError(
        'PATH_DENIED',
        `${what} "${p}" (${abs}): it is inside the run state folder ${dir}, which holds the run journals; runs never write there (not even with --allow-write): use another folder`,
        { ...where, path: p, protected: dir },
      );
    }
  }

  /** Protects a loaded hatchery: its folder, its file and every file it depends on. */
  protectHatchery(h: { file: string; dir: string; dependencies: readonly string[] }): void {
    // A definition built in memory ('' file) was not loaded from any folder.
    if (!h.file) return;
    this.hatcheryDirs.add(realish(h.dir));
    this.files.add(realish(h.file));
    for (const d of h.dependencies) {
      this.files.add(realish(d));
      // Walked again on every load of the hatchery: the module may import other files now.
      if (isCodeFile(d)) this.protectModule(d);
    }
  }

  /** True when `real` is a hatchery file or a file a loaded hatchery depends on. */
  isHatcheryFile(real: string): boolean {
    if (this.files.has(real)) return true;
    for (const dir of this.served) if (isServedHatcheryFile(real, dir)) return true;
    for (const source of this.fileSources) {
      for (const f of source()) if (f === real || realish(f) === real) return true;
    }
    return false;
  }

  /** The protected folder `real` is in that no --allow-write folder opens, if any. */
  lockedBy(real: string): string | undefined {
    for (const set of [this.served, this.hatcheryDirs]) {
      for (const dir of set) {
        if (!isInside(real, dir)) continue;
        const opened = this.optIns.some((o) => isInside(o, dir) && isInside(real, o));
        if (!opened) return dir;
      }
    }
    return undefined;
  }

  private inRoots(real: string): boolean {
    return this.realRoots.some((root) => isInside(real, root));
  }

  private outside(p: string, abs: string, where: ErrorContext, what: string): HatcheryError {
    const roots = this.roots.length
      ? `the write roots (${this.roots.join(', ')})`
      : 'every write root (there is none: the working folder is / or the home folder)';
    return new HatcheryError(
      'PATH_DENIED',
      `${what} "${p}" (${abs}): it is outside ${roots}; use a path below one of them, or allow a folder with --allow-write DIR`,
      { ...where, path: p },
    );
  }

  /**
   * Why a run of a hatchery file in `dir` could not write `abs` (`p` as the file wrote it), checked
   * when the file loads: this policy's rule, with `dir` protected as it is once the file runs.
   */
  loadWriteProblem(p: string, abs: string, dir: string): string | undefined {
    const real = realish(abs);
    try {
      this.checkWrite(real, p, abs, {});
    } catch (err) {
      return (err as Error).message;
    }
    const own = realish(dir);
    if (!isInside(real, own) || this.optIns.some((o) => isInside(o, own) && isInside(real, o)))
      return undefined;
    const elsewhere = this.roots.find((r) => !isInside(realish(r), own));
    const instead = elsewhere ? `write below ${elsewhere}` : 'run from another folder (runs write below it)';
    return `cannot write "${p}" (${abs}): runs never change the hatchery's own folder; ${instead}, or open it with --allow-write ${dir}`;
  }

  /** Throws PATH_DENIED unless a run may write the file whose real path is `real`. */
  checkWrite(real: string, p: string, abs: string, where: ErrorContext): void {
    this.checkSealed(real, p, abs, where, 'cannot write');
    if (!this.inRoots(real)) throw this.outside(p, abs, where, 'cannot write');
    const locked = this.lockedBy(real);
    const hatchery = this.isHatcheryFile(real);
    if (locked === undefined && !hatchery) {
      const rule = this.plantRule(real);
      if (rule === undefined) return;
      throw new HatcheryError(
        'PATH_DENIED',
        `cannot write "${p}" (${abs}): ${rule}; a run never creates or changes it, even with --allow-write: write elsewhere`,
        { ...where, path: p },
      );
    }
    const inLocked =
      locked === undefined ? '' : `it is inside the protected folder ${locked} (${WHY_PROTECTED})`;
    const why = hatchery
      ? `${inLocked ? `${inLocked}, and ` : ''}it is a hatchery file or a file a loaded hatchery depends on: a run never creates or changes those, even with --allow-write`
      : `${inLocked}; write elsewhere, or let runs write there with --allow-write ${locked} (or a folder inside it)`;
    throw new HatcheryError('PATH_DENIED', `cannot write "${p}" (${abs}): ${why}`, {
      ...where,
      path: p,
      ...(locked === undefined ? {} : { protected: locked }),
    });
  }

  /** The path of `real` below the innermost write root holding it, split in names. */
  private namesBelowRoot(real: string): string[] {
    let root = '';
    for (const r of this.realRoots) if (r.length > root.length && isInside(real, r)) root = r;
    const rel = root ? path.relative(root, real) : real;
    return rel ? rel.split(path.sep) : [];
  }

  /**
   * The rule that keeps runs from planting code or settings the server loads at its next start, when
   * `real` falls under one (letter case ignored: a case-insensitive disk maps `Package.JSON` to the file).
   */
  private plantRule(real: string): string | undefined {
    const given = this.cliFiles.get(real);
    if (given !== undefined)
      return `files given on the command line are protected: the server was started with ${given}, and what a run wrote there would act on the next start, doctor or validate --connect`;
    const by = this.imported.get(real);
    if (by !== undefined)
      return `modules imported by a js: module are protected: ${by} imports it, so code planted there would run on the next import`;
    const names = this.namesBelowRoot(real).map((n) => n.toLowerCase());
    if (names.includes('node_modules'))
      return 'node_modules is protected: code planted there runs when a module is imported';
    const name = names[names.length - 1] ?? '';
    if (name === 'package.json')
      return 'package.json is protected: it decides what a module import loads and what npm runs';
    if (name.startsWith('.env'))
      return '.env files are protected: they set the environment of the next start';
    return undefined;
  }

  /** Throws unless folders may be made at `real`: inside a write root, or on the way to one. */
  checkFolder(real: string, p: string, abs: string, where: ErrorContext): void {
    this.checkSealed(real, p, abs, where, 'cannot create folders for');
    if (this.inRoots(real) || this.realRoots.some((root) => isInside(root, real))) return;
    throw this.outside(p, abs, where, 'cannot create folders for');
  }

  /** Throws PATH_DENIED unless `real` may be a program's working folder. */
  checkWorkDir(real: string, p: string, abs: string, where: ErrorContext): void {
    this.checkSealed(real, p, abs, where, 'working folder');
    if (!this.inRoots(real)) throw this.outside(p, abs, where, 'working folder');
    const locked = this.lockedBy(real);
    if (locked !== undefined) {
      throw new HatcheryError(
        'PATH_DENIED',
        `working folder "${p}" (${abs}) is inside the protected folder ${locked} (${WHY_PROTECTED}); use another folder, or start with --allow-write ${locked}`,
        { ...where, path: p, protected: locked },
      );
    }
    if (this.namesBelowRoot(real).some((n) => n.toLowerCase() === 'node_modules')) {
      throw new HatcheryError(
        'PATH_DENIED',
        `working folder "${p}" (${abs}): node_modules is protected: a program working there could plant code that runs when a module is imported; use another folder`,
        { ...where, path: p },
      );
    }
  }

  /** The working folder of a program started without one: `preferred` if writable, else a write root. */
  defaultWorkDir(preferred: string): string {
    for (const dir of [preferred, ...this.roots]) {
      const real = realish(dir);
      const sealed = [...this.sealed].some((s) => isInside(real, s));
      if (this.inRoots(real) && this.lockedBy(real) === undefined && !sealed) return dir;
    }
    // No writable folder at all (e.g. a server started from /): a program still needs somewhere to run.
    return tmpdir();
  }
}
