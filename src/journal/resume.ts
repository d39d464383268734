/**
 * Resuming a run from its journal: reload its file, refuse when it changed (unless forced), and run
 * the same run id again with the journal's finished node executions served instead of run.
 */
import { existsSync } from 'node:fs';
import { HatcheryError } from '../core/errors.js';
import type { AskFn, Hatchery, NodeMemo, RunListener } from '../engine/contracts.js';
import type { Provider } from '../providers/types.js';
import { listNames } from '../schema/suggest.js';
import { ownerOf } from './fold.js';
import { buildMemo } from './memo.js';
import { definitionHashes } from './run-meta.js';
import { runsCommandLine } from './state-dir.js';
import type { PendingQuestion, RunJournal, RunStore, StoredRun } from './store.js';

/** What redaction leaves of a secret (core/secrets.ts). */
const REDACTED = '[redacted]';

/** Options of Runtime.resume. */
export interface ResumeOptions {
  /** Run again from the first execution of this node (also allowed for a run that succeeded). */
  from?: string;
  /** Resume although the file changed: nothing is taken from the journal from the first changed node on. */
  force?: boolean;
  /** The answer to the question the run is suspended at (status input_required). */
  answer?: string;
  /**
   * A durable engine runs the run again from its start, answering the steps that finished from its
   * checkpoints: nothing is taken from the journal.
   */
  byEngine?: boolean;
  signal?: AbortSignal;
  onEvent?: RunListener;
  /** Asks a person the questions after the answered one (undefined: the run suspends again). */
  ask?: AskFn;
  sampling?: Provider;
}

/** What a resumed attempt is run with: the run's own id, input and vars, the memo and the reopened journal. */
export interface ResumedRun {
  hatchery: Hatchery;
  stored: StoredRun;
  /** Undefined when a durable engine replays the run (ResumeOptions.durable). */
  memo: NodeMemo | undefined;
  journal: RunJournal;
  ask: AskFn | undefined;
}

/** How the file of a run differs from the definition it started with. */
export interface DefinitionChanges {
  changed: string[];
  added: string[];
  removed: string[];
  /** Fields outside the nodes (model, inputs, start...) changed. */
  topLevel: boolean;
}

/** The differences between a run's recorded hashes and the file as it is now. */
export function definitionChanges(stored: StoredRun, h: Hatchery): DefinitionChanges {
  const now = definitionHashes(h);
  const before = stored.meta.nodes ?? {};
  const changed: string[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const [name, hash] of Object.entries(now.nodes)) {
    if (!Object.hasOwn(before, name)) added.push(name);
    else if (before[name] !== hash) changed.push(name);
  }
  for (const name of Object.keys(before)) if (!Object.hasOwn(now.nodes, name)) removed.push(name);
  const nodes = changed.length + added.length + removed.length > 0;
  return { changed, added, removed, topLevel: !nodes && now.hash !== stored.meta.hash };
}

function describeChanges(c: DefinitionChanges): string {
  const parts: string[] = [];
  if (c.changed.length) parts.push(`changed: ${listNames(c.changed)}`);
  if (c.added.length) parts.push(`added: ${listNames(c.added)}`);
  if (c.removed.length) parts.push(`removed: ${listNames(c.removed)}`);
  if (c.topLevel) parts.push('its top-level fields (model, inputs, start...) changed');
  return parts.join('; ');
}

/** Drones whose conversation another drone continues: their history is not in the journal. */
function continued(h: Hatchery): Set<string> {
  const out = new Set<string>();
  for (const n of h.def.nodes as readonly { conversation?: unknown }[]) {
    if (typeof n.conversation === 'string') out.add(n.conversation);
  }
  return out;
}

/**
 * The AskFn of a resumed run that was suspended at `pending`: the first question of that node gets
 * `answer`, later ones go to `fallback` (or suspend the run again when there is none).
 */
export function answeringAsk(
  pending: PendingQuestion | undefined,
  answer: string,
  fallback: AskFn | undefined,
): AskFn {
  let used = false;
  return (question, signal) => {
    if (!used && (pending === undefined || question.node === pending.node)) {
      used = true;
      return Promise.resolve(answer);
    }
    if (fallback) return fallback(question, signal);
    const q: PendingQuestion = { node: question.node, kind: question.kind, question: question.question };
    if (question.choices) q.choices = question.choices;
    if (question.schema) q.schema = question.schema;
    return Promise.reject(
      new HatcheryError(
        'INPUT_REQUIRED',
        `node "${question.node}" waits for an answer: ${question.question}`,
        { node: question.node, question: q },
      ),
    );
  };
}

/**
 * Prepares a resumed attempt of run `id`: checks that it may be resumed, reloads and compares its
 * file, builds the memo, reopens the journal and records the `resumed` line. Errors: NOT_FOUND (no
 * such run, file gone, no such node), RESUME_REFUSED (running, succeeded, file changed).
 */
export async function prepareResume(
  store: RunStore,
  load: (file: string) => Promise<Hatchery>,
  id: string,
  options: ResumeOptions,
): Promise<ResumedRun> {
  let stored = await store.read(id);
  if (!stored) {
    throw new HatcheryError(
      'NOT_FOUND',
      `no run "${id}" in ${store.location}; list the runs there with: ${runsCommandLine(['list'], store.location)} (another state folder: pass it with --state DIR)`,
      { run: id, state: store.location },
    );
  }
  if (stored.summary.status === 'running') {
    // A run whose owner died still says running until someone claims it.
    await store.claimInterrupted();
    stored = (await store.read(id)) ?? stored;
    if (stored.summary.status === 'running') {
      throw new HatcheryError(
        'RESUME_REFUSED',
        `run ${id} is still running in a live process (pid ${ownerOf(stored.meta, stored.records).pid}); cancel it first with: ${runsCommandLine(['cancel', id], store.location)}`,
        { run: id },
      );
    }
  }
  const { meta, summary } = stored;
  if (options.byEngine && summary.status !== 'interrupted' && summary.status !== 'running') {
    // Cancelled (or ended) since its process died: a recovery must not undo that.
    throw new HatcheryError('RESUME_REFUSED', `run ${id} is ${summary.status} now; it is not run again`, {
      run: id,
    });
  }
  if (summary.status === 'succeeded' && options.from === undefined) {
    throw new HatcheryError(
      'RESUME_REFUSED',
      `run ${id} already succeeded; to run it again from a node, resume with --from NODE`,
      { run: id },
    );
  }
  if (options.answer !== undefined && summary.status !== 'input_required') {
    throw new HatcheryError(
      'RESUME_REFUSED',
      `run ${id} is not waiting for an answer (its status is ${summary.status}); resume it without one`,
      { run: id },
    );
  }
  // The journal never holds a secret: an input that held one cannot be given back to the run.
  const redacted = [
    ...(meta.input?.includes(REDACTED) ? ['its input'] : []),
    ...Object.entries(meta.vars ?? {})
      .filter(([, v]) => typeof v === 'string' && v.includes(REDACTED))
      .map(([k]) => `input "${k}"`),
  ];
  if (redacted.length > 0) {
    throw new HatcheryError(
      'RESUME_REFUSED',
      `run ${id} cannot be resumed: ${redacted.join(', ')} held a secret, which its journal keeps only as ${REDACTED}; start a new run with the value`,
      { run: id },
    );
  }
  if (!meta.file) {
    throw new HatcheryError(
      'NOT_FOUND',
      `run ${id} ran a definition built in memory, not a file, so it cannot be reloaded to resume`,
      { run: id },
    );
  }
  if (!existsSync(meta.file)) {
    throw new HatcheryError(
      'NOT_FOUND',
      `the file of run ${id}, ${meta.file}, is gone; put it back to resume the run`,
      { run: id, file: meta.file },
    );
  }
  const hatchery = await load(meta.file);
  const diff = definitionChanges(stored, hatchery);
  const changed = [...diff.changed, ...diff.added, ...diff.removed];
  if ((changed.length > 0 || diff.topLevel) && options.force !== true) {
    throw new HatcheryError(
      'RESUME_REFUSED',
      `${meta.file} changed since run ${id} started (${describeChanges(diff)}); resume with --force to run the changed nodes again (what finished before the first of them is taken from the journal), or start a new run`,
      { file: meta.file, run: id, changed: diff.changed, added: diff.added, removed: diff.removed },
    );
  }
  const from = options.from;
  if (from !== undefined && !hatchery.nodes.has(from)) {
    throw new HatcheryError(
      'NOT_FOUND',
      `--from: no node named "${from}" in ${meta.file}; nodes: ${listNames([...hatchery.nodes.keys()])}`,
      { file: meta.file, run: id, node: from },
    );
  }
  const built = options.byEngine
    ? { memo: undefined, cut: undefined, size: 0, cutNode: undefined }
    : buildMemo(stored.records, { from, changed: new Set(changed), rerun: continued(hatchery) });
  if (from !== undefined && built.cut === undefined) {
    throw new HatcheryError(
      'NOT_FOUND',
      `--from: node "${from}" did not run in run ${id}; resume without --from to go on where it stopped`,
      { file: meta.file, run: id, node: from },
    );
  }
  const record: Record<string, unknown> = {
    attempt: options.byEngine ? summary.attempts : summary.attempts + 1,
  };
  if (from !== undefined) record.from = from;
  if (built.cut !== undefined) record.cut = built.cut;
  if (changed.length > 0 || diff.topLevel) record.forced = describeChanges(diff);
  if (options.byEngine) record.recovered = true;
  const journal = await store.reopen(id, record);
  const ask =
    options.answer !== undefined ? answeringAsk(summary.question, options.answer, options.ask) : options.ask;
  return { hatchery, stored, memo: built.memo, journal, ask };
}
