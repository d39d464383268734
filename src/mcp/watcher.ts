import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FSWatcher } from 'chokidar-v5';
import { IGNORE_FILE } from '../loader/ignore.js';

/** Default quiet time after the last file event before a reload, in milliseconds. */
const DEFAULT_DEBOUNCE_MS = 100;
/**
 * Shortest debounce allowed. chokidar drops (does not delay) a file's change events within 50 ms of
 * the previous one; waiting longer than that before reading guarantees the read sees the last write.
 */
const MIN_DEBOUNCE_MS = 60;

/** Options of the folder watcher. */
export interface WatcherOptions {
  /** Quiet time after the last event before `onChange` runs (editors write in several steps). */
  debounceMs?: number;
  /** Receives the paths that were added, changed or deleted; batches never overlap. */
  onChange: (paths: string[]) => Promise<void>;
  /** Receives watcher errors (the watcher keeps going). */
  onError?: (err: Error) => void;
}

/**
 * What a watcher started after the folder was loaded checks once its initial scan is done: an edit made
 * between the load and the moment chokidar watched that file's folder raises no event, so every file
 * modified since the load began is queued as if it had changed (unless its text is what was loaded).
 */
export interface CatchUp {
  /** `Date.now()` when the load began reading files, minus the file system clock's coarseness. */
  since: number;
  /** The files the load read (served, failing, dependencies): one gone since is queued as deleted. */
  known: () => Iterable<string>;
  /**
   * The hatchery files the folder holds, listed once the scan is done: a file created while chokidar
   * was reading its folder can be in neither its listing nor its events.
   */
  list?: () => Promise<Iterable<string>>;
  /** True when the file's text is still the one that was loaded (a write before the load, not after). */
  unchanged?: (file: string) => Promise<boolean>;
}

/**
 * Watches the hatchery folder (recursively) and the files outside it that hatcheries depend on,
 * and reports debounced batches of changed paths, one batch at a time.
 */
export class HatcheryWatcher {
  private readonly dir: string;
  private watcher: FSWatcher | undefined;
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private readonly extra = new Set<string>();
  private closed = false;
  private readonly debounceMs: number;
  private ready: Promise<void> | undefined;
  private stopWaiting: (() => void) | undefined;

  constructor(
    dir: string,
    private readonly options: WatcherOptions,
  ) {
    this.dir = path.resolve(dir);
    this.debounceMs = Math.max(options.debounceMs ?? DEFAULT_DEBOUNCE_MS, MIN_DEBOUNCE_MS);
  }

  /**
   * Starts watching; resolves once the initial scan is done, so later edits are never missed. With
   * `catchUp`, files modified since the folder was loaded are queued then too, so the caller need not
   * wait for the scan (the server answers clients meanwhile).
   */
  start(catchUp?: CatchUp): Promise<void> {
    this.ready ??= this.begin(catchUp);
    return this.ready;
  }

  private async begin(catchUp: CatchUp | undefined): Promise<void> {
    const dir = this.dir;
    // Imported here, not at the top: a module graph the server does not need to start answering.
    const { watch } = await import('chokidar-v5');
    if (this.closed) return;
    const w = watch(dir, {
      ignoreInitial: true,
      // Matches listHatcheryFileNames: dot-folders and node_modules inside the folder are not served;
      // the folder's .hatcheryignore is watched, so editing its patterns takes effect at once.
      ignored: (p: string) => {
        const rel = path.relative(dir, p);
        if (!rel || rel.startsWith('..') || path.isAbsolute(rel) || rel === IGNORE_FILE) return false;
        return rel.split(path.sep).some((part) => part.startsWith('.') || part === 'node_modules');
      },
    });
    this.watcher = w;
    // Dependencies given before chokidar was loaded.
    if (this.extra.size > 0) w.add([...this.extra]);
    const on = (p: string) => this.queue(p);
    w.on('add', on).on('change', on).on('unlink', on);
    w.on('error', (err) => this.options.onError?.(err as Error));
    await new Promise<void>((resolve) => {
      // close() during the scan: chokidar never says ready then.
      this.stopWaiting = resolve;
      w.once('ready', () => resolve());
    });
    this.stopWaiting = undefined;
    if (catchUp && !this.closed) await this.catchUp(w, catchUp);
  }

  /** Queues the files modified (or deleted) since the load began: see CatchUp. */
  private async catchUp(w: FSWatcher, c: CatchUp): Promise<void> {
    const known = new Set(c.known());
    const paths = new Set(known);
    for (const [folder, names] of Object.entries(w.getWatched())) {
      for (const name of names) paths.add(path.resolve(folder, name));
    }
    for (const p of (await c.list?.().catch(() => undefined)) ?? []) paths.add(path.resolve(p));
    await Promise.all(
      [...paths].map(async (p) => {
        try {
          const s = await stat(p);
          if (s.isDirectory() || s.mtimeMs < c.since) return;
          if (known.has(p) && (await c.unchanged?.(p))) return;
        } catch {
          if (!known.has(p)) return;
        }
        this.queue(p);
      }),
    );
  }

  /** Also watches these files (dependencies outside the folder); already watched paths are skipped. */
  watchFiles(files: Iterable<string>): void {
    if (this.closed) return;
    const add: string[] = [];
    for (const f of files) {
      const rel = path.relative(this.dir, f);
      const inside = rel && !rel.startsWith('..') && !path.isAbsolute(rel);
      if (inside || this.extra.has(f)) continue;
      this.extra.add(f);
      add.push(f);
    }
    // Before chokidar is loaded, begin() adds every path of `extra`.
    if (add.length > 0) this.watcher?.add(add);
  }

  /** Resolves when every batch queued so far has been handled (tests, shutdown). */
  async idle(): Promise<void> {
    await this.ready?.catch(() => undefined);
    while (this.timer || this.pending.size > 0) {
      await new Promise((r) => setTimeout(r, this.debounceMs));
    }
    await this.running;
  }

  /** Stops watching; a batch already running finishes. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.stopWaiting?.();
    await this.watcher?.close();
    await this.running;
  }

  private queue(p: string): void {
    if (this.closed) return;
    this.pending.add(path.resolve(p));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const batch = [...this.pending];
      this.pending.clear();
      this.running = this.running.then(async () => {
        if (this.closed) return;
        try {
          await this.options.onChange(batch);
        } catch (err) {
          // The batch chain must never reject: a rejected link would skip every later batch.
          try {
            this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
          } catch {
            // Nothing left to report to.
          }
        }
      });
    }, this.debounceMs);
  }
}
