/**
 * Runs the studio starts, watches, resumes and cancels, and past runs read back from the journal. A
 * run started here keeps its tree (with each model call's rendered prompt) in memory while the
 * studio runs; a past run's tree and prompts are rebuilt from its journal records.
 */
import { randomUUID } from 'node:crypto';
import { HatcheryError } from '../core/errors.js';
import { redactText } from '../core/secrets.js';
import type { RunEvent } from '../engine/contracts.js';
import { redactDeep } from '../journal/canonical.js';
import { isRunId } from '../journal/run-files.js';
import type { RunStatus, RunSummary, StoredRun } from '../journal/store.js';
import { RunTree, type TreeEntry, type TreeEvent } from '../runtime/run-tree.js';
import type { Runtime } from '../runtime/runtime.js';
import type { StudioFolder } from './folder.js';

/** Runs kept in memory after they ended (the newest), besides the journal. */
const KEEP_ENDED = 50;
/** Longest text field of an event sent live; the whole text is in the run's detail. */
const EVENT_TEXT = 2000;

/** A run this studio started or resumed: the summary fields it keeps; steps and usage are its tree's. */
interface LiveRun
  extends Pick<
    RunSummary,
    'id' | 'hatchery' | 'file' | 'status' | 'startedAt' | 'endedAt' | 'output' | 'error' | 'code'
  > {
  tree: RunTree;
  /** Model call entry id -> the request it sent (redacted). */
  prompts: Record<string, unknown>;
  controller: AbortController;
  /** Settles when the attempt ended and the page was told. */
  done?: Promise<void>;
}

/** What the page gets for one run. */
export interface RunDetail {
  id: string;
  hatchery: string;
  status: RunStatus;
  summary?: RunSummary;
  tree: TreeEntry;
  prompts: Record<string, unknown>;
  live: boolean;
}

/** Journal record types that are run events (the others are the store's own: run_start, resumed...). */
const TREE_RECORDS = new Set([
  'node_start',
  'node_end',
  'node_error',
  'tool_call',
  'model_call',
  'model_retry',
  'nested_start',
  'nested_end',
]);

/** The status of a journaled run's root entry; every other run status is 'failed'. */
const ROOT_STATUS: Partial<Record<RunStatus, TreeEntry['status']>> = {
  succeeded: 'done',
  input_required: 'waiting',
  running: 'running',
};

/** A USAGE error: the page sent something this studio cannot do. */
function bad(message: string): HatcheryError {
  return new HatcheryError('USAGE', message);
}

/** Starts, tracks and reads runs for the studio; `send` broadcasts to every open page. */
export class StudioRuns {
  private readonly live = new Map<string, LiveRun>();

  constructor(
    private readonly runtime: Runtime,
    private readonly folder: StudioFolder,
    private readonly send: (type: string, data: unknown) => void,
    private readonly secrets: readonly string[],
  ) {}

  /** Starts a run of a served hatchery with its input and declared inputs; returns its id at once. */
  start(body: Record<string, unknown>): { runId: string } {
    const name = body.hatchery;
    const entry = typeof name === 'string' ? this.folder.registry.get(name) : undefined;
    if (!entry) throw bad(`no hatchery named ${JSON.stringify(String(name))} in ${this.folder.registry.dir}`);
    const h = entry.hatchery;
    if (body.input !== undefined && typeof body.input !== 'string') throw bad('"input" must be a string');
    const vars: Record<string, string> = {};
    if (body.vars !== undefined) {
      if (body.vars === null || typeof body.vars !== 'object' || Array.isArray(body.vars))
        throw bad('"vars" must be an object of strings');
      for (const [k, v] of Object.entries(body.vars)) {
        if (!Object.hasOwn(h.inputs, k))
          throw bad(
            `${h.name} declares no input "${k}" (declared: ${Object.keys(h.inputs).join(', ') || 'none'})`,
          );
        if (typeof v !== 'string') throw bad(`input "${k}" must be a string`);
        if (v !== '') vars[k] = v;
      }
    }
    const run = this.track(randomUUID(), h.name, entry.file);
    const input = body.input === '' ? undefined : (body.input as string | undefined);
    const { signal } = run.controller;
    const onEvent = (e: RunEvent) => this.event(run, e);
    this.finish(run, this.runtime.run(h, { input, vars, runId: run.id, source: 'studio', signal, onEvent }));
    return { runId: run.id };
  }

  /** Resumes a journaled run (answering the question it waits on, when `answer` is given). */
  async resume(id: string, body: { answer?: unknown; force?: unknown }): Promise<{ runId: string }> {
    this.checkId(id);
    if (this.live.get(id)?.status === 'running') throw bad(`run ${id} is running already`);
    if (body.answer !== undefined && typeof body.answer !== 'string') throw bad('"answer" must be a string');
    const attempt = await this.runtime.prepareResume(id, {
      answer: body.answer as string | undefined,
      force: body.force === true,
    });
    const stored = await this.runtime.store?.read(id);
    const run = this.track(id, stored?.meta.hatchery ?? '', stored?.meta.file ?? '');
    this.finish(run, attempt({ signal: run.controller.signal, onEvent: (e) => this.event(run, e) }));
    return { runId: id };
  }

  /** Cancels a run: one running here is aborted, one the journal holds is cancelled through the store. */
  async cancel(id: string): Promise<{ cancelled: boolean }> {
    this.checkId(id);
    const run = this.live.get(id);
    if (run?.status === 'running') {
      run.controller.abort(new HatcheryError('ABORTED', `run ${id} was cancelled from the studio`));
      return { cancelled: true };
    }
    const store = this.runtime.store;
    if (!store) throw bad(`run ${id} is not running here and this studio keeps no journal`);
    const s = await store.cancel(id);
    if (!s) throw new HatcheryError('NOT_FOUND', `no run ${id} in ${store.location}`);
    return { cancelled: s.status === 'cancelled' };
  }

  /** Past and current runs, newest first: the journal's, plus those running here without one. */
  async list(): Promise<RunSummary[]> {
    const stored = (await this.runtime.store?.list({ limit: 100 })) ?? [];
    const ids = new Set(stored.map((s) => s.id));
    const mine = [...this.live.values()].filter((r) => !ids.has(r.id)).map((r) => this.summaryOf(r));
    return [...mine, ...stored].sort((a, b) => b.startedAt - a.startedAt);
  }

  /** One run: its tree, each model call's prompt when kept, its summary. */
  async detail(id: string): Promise<RunDetail> {
    this.checkId(id);
    const run = this.live.get(id);
    const stored = await this.runtime.store?.read(id);
    // A run of this studio is shown from memory, with the journal's summary when it has one.
    const view = run ?? (stored && treeOf(stored, this.secrets));
    const summary = stored?.summary ?? (run && this.summaryOf(run));
    if (!view || !summary) throw new HatcheryError('NOT_FOUND', `no run ${id}`);
    return {
      id,
      hatchery: summary.hatchery,
      status: run?.status ?? summary.status,
      summary,
      tree: view.tree.root,
      prompts: view.prompts,
      live: run?.status === 'running',
    };
  }

  /** Cancels every run still going and waits for them to end (shutdown). */
  async close(): Promise<void> {
    const going = [...this.live.values()].filter((r) => r.status === 'running');
    for (const r of going) r.controller.abort(new HatcheryError('ABORTED', 'the studio is shutting down'));
    await Promise.all(going.map((r) => r.done));
  }

  private checkId(id: string): void {
    // Checked before the store is touched: an id is never a path.
    if (!isRunId(id))
      throw new HatcheryError('NOT_FOUND', `not a run id: ${JSON.stringify(String(id).slice(0, 80))}`);
  }

  private track(id: string, hatchery: string, file: string): LiveRun {
    const run: LiveRun = {
      id,
      hatchery,
      file,
      tree: new RunTree(hatchery, Date.now(), true),
      prompts: {},
      controller: new AbortController(),
      status: 'running',
      startedAt: Date.now(),
    };
    this.live.delete(id);
    this.live.set(id, run);
    const ended = [...this.live.values()].filter((r) => r.status !== 'running');
    for (const r of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED))) this.live.delete(r.id);
    this.send('run_status', { runId: id, hatchery, status: 'running' });
    return run;
  }

  private finish(run: LiveRun, result: Promise<{ output: string }>): void {
    run.done = result
      .then(
        (r) => {
          run.status = 'succeeded';
          run.output = r.output;
        },
        (err: unknown) => {
          const e = err instanceof HatcheryError ? err : undefined;
          run.code = e?.code;
          run.error = err instanceof Error ? err.message : String(err);
          run.status =
            e?.code === 'INPUT_REQUIRED' ? 'input_required' : e?.code === 'ABORTED' ? 'cancelled' : 'failed';
        },
      )
      .then(async () => {
        run.endedAt = Date.now();
        // A store's read waits for the run's last record: the page, told now, reads the question a
        // run waits on; and the journal's status is the one every other view shows.
        const stored = await this.runtime.store?.read(run.id).catch(() => undefined);
        if (stored) run.status = stored.summary.status;
        this.send('run_status', {
          runId: run.id,
          hatchery: run.hatchery,
          status: run.status,
          output: clip(run.output, this.secrets),
          error: run.error,
          code: run.code,
        });
      });
  }

  private event(run: LiveRun, e: RunEvent): void {
    const entry = run.tree.apply(e as TreeEvent);
    if (e.type === 'model_call' && entry) {
      const { system, messages } = e.request;
      run.prompts[entry.id] = redactDeep({ system, messages }, this.secrets);
    }
    this.send('run_event', { runId: run.id, event: slim(e, this.secrets), entry: entry?.id });
  }

  private summaryOf(run: LiveRun): RunSummary {
    const { tree, prompts, controller, done, ...kept } = run;
    return { ...kept, source: 'studio', steps: tree.stepCount, usage: tree.usage(), attempts: 1 };
  }
}

/** A run event for the page: no request (the detail has it), long texts cut. */
function slim(e: RunEvent, secrets: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === 'request' || k === 'value' || v === undefined) continue;
    out[k] = typeof v === 'string' ? clip(v, secrets) : v;
  }
  return out;
}

/**
 * A text cut to EVENT_TEXT characters, redacted before it is cut: a cut through a secret would leave a
 * half that the redaction of the whole response no longer recognises.
 */
function clip(s: string | undefined, secrets: readonly string[]): string | undefined {
  if (s === undefined || s.length <= EVENT_TEXT) return s;
  const clean = redactText(s, secrets, { authHeaders: true });
  return clean.length > EVENT_TEXT ? `${clean.slice(0, EVENT_TEXT)}…` : clean;
}

/** The tree of a journaled run, rebuilt from its records at their times, and the prompts they kept. */
export function treeOf(
  stored: StoredRun,
  secrets: readonly string[],
): { tree: RunTree; prompts: Record<string, unknown> } {
  const { meta, summary, records } = stored;
  const tree = new RunTree(meta.hatchery, meta.startedAt, true);
  const prompts: Record<string, unknown> = {};
  // The journal writes a node's system prompt and messages with its first call, then only the messages
  // each later call added: the conversation is put together again here, call by call.
  const conversations = new Map<string, { system: unknown; messages: unknown[] }>();
  for (const rec of records) {
    if (!TREE_RECORDS.has(rec.type)) continue;
    const entry = tree.apply(rec as unknown as TreeEvent, rec.at);
    if (rec.type === 'model_call' && entry && Array.isArray(rec.messages)) {
      const key = `${String(rec.step)}|${String(rec.call ?? '')}`;
      let c = conversations.get(key);
      if (rec.from === undefined || !c) {
        c = { system: rec.system ?? '', messages: [] };
        conversations.set(key, c);
      }
      c.messages = [...c.messages.slice(0, typeof rec.from === 'number' ? rec.from : 0), ...rec.messages];
      prompts[entry.id] = redactDeep({ system: c.system, messages: c.messages }, secrets);
    }
  }
  const { usage, error, code, output, endedAt } = summary;
  Object.assign(tree.root, { status: ROOT_STATUS[summary.status] ?? 'failed', usage, error, code, output });
  if (endedAt !== undefined) tree.root.ms = endedAt - meta.startedAt;
  return { tree, prompts };
}
