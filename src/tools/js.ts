import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { HatcheryError } from '../core/errors.js';
import type { RunContext, Tool } from '../engine/contracts.js';
import { buildTool, type JsRef } from './js-tool.js';

export { buildTool, type JsRef, type JsToolContext, type JsToolFunction } from './js-tool.js';

type Module = Record<string, unknown>;

/**
 * How long at most a run reuses what it found of a js: module before it checks the path and stats the
 * file again (a timer ends every run's looks at once, so a call reads no clock).
 */
export const JS_RECHECK_MS = 1000;

/**
 * Distinct contents of one js: module imported per process. Node never unloads an ES module, so each
 * imported version stays in memory for good: past this many, edits are no longer loaded.
 */
export const MAX_JS_MODULE_VERSIONS = 100;

/** What a run found of one module lately. */
interface SeenModule {
  /** JsTools.epoch when the module was looked at: the look is reused while it is the same. */
  readonly epoch: number;
  readonly tool: Promise<Tool>;
}

/** The versions of one module file imported so far, by content hash, and the one in use. */
interface ModuleVersions {
  /** Modification time and size of the file when `current` was chosen. */
  stamp: string;
  current: string;
  imports: Map<string, Promise<Module>>;
  /** True once the notice about the limit was given. */
  refused: boolean;
}

/**
 * Loads js: tools. A module is imported anew when its content changes, so edits are picked up; a
 * content seen before reuses its first import, and at most `maxVersions` contents are imported per
 * file (the server keeps serving the last one and says so through `onNotice`).
 */
export class JsTools {
  /** Receives the notice that a module's further edits are not loaded (the server logs it). */
  onNotice: ((message: string) => void) | undefined;
  private readonly modules = new Map<string, ModuleVersions>();
  private readonly tools = new Map<string, { version: string; tool: Tool }>();
  /** Bumped JS_RECHECK_MS after a look (see tick): every look older than that is then out of date. */
  private epoch = 0;
  private ticking = false;

  constructor(readonly maxVersions = MAX_JS_MODULE_VERSIONS) {}

  /**
   * The tool a js: reference names, from the module below the scope's allowed roots. A run looks at
   * a module (its path against the roots, its file's stamp) once per JS_RECHECK_MS: the branches of a
   * fan-out, or a loop, calling one tool share that look instead of each checking the path and
   * stat'ing the file. A new run always looks again, so an edit (or a symlink swapped to point
   * outside the roots) is seen by the next run, and by a long run within JS_RECHECK_MS.
   */
  resolve(ref: JsRef, scope: RunContext): Promise<Tool> {
    // What the run found of each module lately (see resolve), kept as long as the run's state lives.
    const run = scope.shared;
    let seen = run.toolMemo as Map<JsRef, SeenModule> | undefined;
    if (seen === undefined) {
      seen = new Map();
      run.toolMemo = seen;
    }
    // By reference: the nodes of one load naming one function share theirs (tools/compile.ts).
    const hit = seen.get(ref);
    if (hit !== undefined && hit.epoch === this.epoch) return hit.tool;
    const entry: SeenModule = { epoch: this.epoch, tool: this.look(ref, scope) };
    this.tick();
    seen.set(ref, entry);
    // A failure is not kept: the next call looks again (the file may have been fixed).
    entry.tool.catch(() => {
      if (seen.get(ref) === entry) seen.delete(ref);
    });
    return entry.tool;
  }

  /**
   * Ends every run's current looks within JS_RECHECK_MS: one unref'd timer per period in which a look
   * was made, instead of a clock read per call (performance.now() costs ~70 ns, a tenth of a fan-out
   * branch). A long run's calls wait for the event loop now and then (the walk yields every 1,024
   * steps, tools do I/O), so the timer is not starved.
   */
  private tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    setTimeout(() => {
      this.epoch++;
      this.ticking = false;
    }, JS_RECHECK_MS).unref();
  }

  /**
   * The tool of the module's current content: its path checked against the roots, its file stamped,
   * and read, hashed and imported again only when the stamp changed.
   */
  private async look(ref: JsRef, scope: RunContext): Promise<Tool> {
    const abs = scope.guard.resolve(scope.hatchery.dir, ref.module, { tool: ref.ref });
    let stamp: string;
    try {
      stamp = stampOf(statSync(abs, { bigint: true }));
    } catch (err) {
      throw notFound(ref, abs, err);
    }
    const versions = await this.versionsAt(abs, stamp, ref);
    const version = versions.current;
    const key = `${abs}#${ref.export}`;
    const hit = this.tools.get(key);
    if (hit && hit.version === version) return hit.tool;
    const tool = buildTool(await versions.imports.get(version)!, ref);
    this.tools.set(key, { version, tool });
    return tool;
  }

  /** The versions of a module file, with `current` set to what the file holds now (within the limit). */
  private async versionsAt(abs: string, stamp: string, ref: JsRef): Promise<ModuleVersions> {
    const known = this.modules.get(abs);
    if (known && known.stamp === stamp) return known;
    let text: Buffer;
    try {
      text = await readFile(abs);
    } catch (err) {
      throw notFound(ref, abs, err);
    }
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
    const versions = known ?? { stamp, current: hash, imports: new Map(), refused: false };
    this.modules.set(abs, versions);
    versions.stamp = stamp;
    if (versions.imports.has(hash)) {
      versions.current = hash;
      return versions;
    }
    if (versions.imports.size >= this.maxVersions) {
      // Keep serving the version in use: one more import would stay in memory until the process ends.
      if (!versions.refused) {
        versions.refused = true;
        const notice = `js:${ref.module}: ${versions.imports.size} versions of ${abs} were loaded since the server started and Node keeps each in memory, so this edit and later ones are not loaded: restart the server to load further edits of ${abs}`;
        if (this.onNotice) this.onNotice(notice);
        else process.emitWarning(notice, 'HatcheryWarning');
      }
      return versions;
    }
    // The query makes Node import the edited file anew instead of its cached first version; the
    // same content gives the same URL, so Node's own cache serves it again.
    const url = `${pathToFileURL(abs).href}?v=${hash}`;
    const mod = (import(url) as Promise<Module>).catch((err: unknown) => {
      throw new HatcheryError(
        'TOOL',
        `${ref.ref}: cannot import ${abs}: ${(err as Error)?.message ?? String(err)}`,
        { tool: ref.ref, path: ref.module },
        { cause: err },
      );
    });
    // A failed import is kept too: the same broken content fails the same way without importing again.
    mod.catch(() => {});
    versions.imports.set(hash, mod);
    versions.current = hash;
    return versions;
  }
}

/**
 * The stamp a module's versions are kept by: a new one means the file is read and hashed again. The
 * status-change time and the inode catch an edit that kept the size and set the modification time
 * back, or a file replaced by another.
 */
function stampOf(info: BigIntStats): string {
  return `${info.mtimeNs}-${info.ctimeNs}-${info.size}-${info.ino}`;
}

function notFound(ref: JsRef, abs: string, err: unknown): HatcheryError {
  return new HatcheryError(
    'NOT_FOUND',
    `${ref.ref}: cannot read module ${abs}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    { tool: ref.ref, path: ref.module },
    { cause: err },
  );
}
