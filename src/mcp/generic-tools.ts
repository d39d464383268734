import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { HatcheryError } from '../core/errors.js';
import type { Usage } from '../providers/types.js';
import { actualOf } from '../schema/issues.js';
import { nearest, quote } from '../schema/suggest.js';
import { type CallEnv, errorResult, runHatcheryCall } from './calls.js';
import {
  json,
  listRuns,
  readStored,
  storedResult,
  storedStatus,
  summaryView,
  waitStored,
} from './durable.js';
import { DEFAULT_RESULT_WAIT_S, GENERIC_TOOL_NAMES, MAX_RESULT_WAIT_S } from './generic-defs.js';
import type { ResumeAttempt, ServerHost } from './host.js';
import { MAX_ERROR_BYTES } from './outbound.js';
import type { RegistryEntry } from './registry.js';
import type { BackgroundRun } from './runs.js';
import { unknownName } from './tool-defs.js';

export { GENERIC_TOOL_NAMES, GENERIC_TOOLS, isGenericTool } from './generic-defs.js';

/** What to do after starting, resuming or answering a run. */
const WAIT_FOR_IT = 'call hatchery_result with this run_id to wait for the result';

/** What a generic tool call can use from its session. */
export interface GenericCallContext {
  core: ServerHost;
  /** Environment of a run bound to this request (hatchery_run). */
  env: CallEnv;
  /** Starts a background run (hatchery_start); the session supplies sampling and elicitation. */
  start: (entry: RegistryEntry, args: Record<string, unknown>) => Promise<BackgroundRun>;
  /** The runs this session started, which hatchery_runs lists (unless the server lists all runs). */
  mine: ReadonlySet<string>;
  /** Records a run as this session's (hatchery_run, hatchery_resume, hatchery_respond). */
  own: (id: string) => void;
  /** Resumes a journaled run in the background (hatchery_resume, hatchery_respond). */
  resume: (
    id: string,
    attempt: ResumeAttempt,
    meta: { hatchery: string; file: string; source?: string; startedAt?: number; usage?: Usage },
  ) => BackgroundRun;
}

function str(args: Record<string, unknown>, key: string, required: boolean): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) {
    if (required) {
      // A misspelt key is the likely reason: name it.
      const typo = Object.keys(args).find((k) => nearest(k, [key]) === key);
      throw new HatcheryError(
        'USAGE',
        `missing argument "${key}"${typo === undefined ? '' : `; you passed ${quote(typo)}: did you mean "${key}"?`}`,
      );
    }
    return undefined;
  }
  if (typeof v !== 'string')
    throw new HatcheryError('USAGE', `argument "${key}" must be a string (text), not ${actualOf(v)}`);
  return v;
}

/** Resolves `name` and flattens `input`, `inputs` and extra arguments into a hatchery's arguments. */
function target(
  core: ServerHost,
  args: Record<string, unknown>,
): { entry: RegistryEntry; args: Record<string, unknown> } {
  const name = str(args, 'name', true)!;
  const entry = core.registry.get(name);
  if (!entry) {
    const names = core.registry.entries().map((e) => e.name);
    throw new HatcheryError(
      'NOT_FOUND',
      unknownName('hatchery', name, names, ' (hatchery_list shows them all)'),
    );
  }
  // No prototype: a "__proto__" key in `inputs` stays a key (refused as unknown) instead of a prototype.
  const flat: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(args)) {
    if (k === 'name' || k === 'inputs') continue;
    flat[k] = v;
  }
  const inputs = args.inputs;
  if (Array.isArray(inputs)) {
    for (const [i, pair] of inputs.entries()) {
      const p = pair as { name?: unknown; value?: unknown } | null;
      if (p === null || typeof p !== 'object' || typeof p.name !== 'string')
        throw new HatcheryError(
          'USAGE',
          `"inputs[${i}]" must be {"name": "<input name>", "value": "<text>"}`,
        );
      if (Object.hasOwn(flat, p.name))
        throw new HatcheryError('USAGE', `"inputs" gives ${quote(p.name)} twice; give each input once`);
      flat[p.name] = p.value;
    }
  } else if (inputs !== undefined) {
    // The shape before strict schemas, {"topic": "owls"}, still works for clients that send it.
    if (typeof inputs !== 'object')
      throw new HatcheryError(
        'USAGE',
        '"inputs" must be a list of {"name": "<input name>", "value": "<text>"} pairs',
      );
    Object.assign(flat, inputs);
  }
  return { entry, args: flat };
}

/** The id a run tool was given; checked for shape before it reaches a store. */
function runId(args: Record<string, unknown>): string {
  return str(args, 'run_id', true)!;
}

function unknownRun(id: string): HatcheryError {
  return new HatcheryError(
    'NOT_FOUND',
    `unknown run id ${quote(id)}: no run of this server has it (it never existed, or it finished too long ago and was dropped); use the run_id that hatchery_start returned`,
  );
}

/** A run of this server's memory, or undefined when only the journal (if any) may know it. */
function liveRun(core: ServerHost, args: Record<string, unknown>): BackgroundRun | undefined {
  return core.runs.get(runId(args));
}

/** True when a result links to a kept output that is no longer kept. */
function goneOutput(core: ServerHost, result: CallToolResult): boolean {
  return result.content.some(
    (b) => b.type === 'resource_link' && core.outputs.owns(b.uri) && !core.outputs.has(b.uri),
  );
}

function list(core: ServerHost): CallToolResult {
  const hatcheries = core.registry.entries().map((e) => ({
    name: e.name,
    description: core.out.desc(e.hatchery.desc),
    inputs: { ...e.hatchery.inputs },
    file: path.relative(core.registry.dir, e.file),
  }));
  // One broken file must not fill the answer: each problem is capped like an error result.
  const problems = core.registry.problems().map((p) => core.out.text(p, MAX_ERROR_BYTES));
  return json({ hatcheries, ...(problems.length ? { problems } : {}) });
}

/** Runs a generic tool; failures become error results, never exceptions. */
export async function callGenericTool(
  name: string,
  rawArgs: Record<string, unknown> | undefined,
  ctx: GenericCallContext,
): Promise<CallToolResult> {
  const { core } = ctx;
  // Strict clients (OpenAI's) send every optional argument, as null when unset: null is "not given".
  const args: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(rawArgs ?? {})) if (v !== null) args[k] = v;
  try {
    switch (name) {
      case 'hatchery_list':
        return list(core);
      case 'hatchery_run': {
        const t = target(core, args);
        const id = randomUUID();
        ctx.own(id);
        return (await runHatcheryCall(core, t.entry, t.args, { ...ctx.env, runId: id })).result;
      }
      case 'hatchery_start': {
        const t = target(core, args);
        const run = await ctx.start(t.entry, t.args);
        return json({ run_id: run.id, hatchery: run.hatchery, state: run.state }, WAIT_FOR_IT);
      }
      case 'hatchery_status': {
        const run = liveRun(core, args);
        if (run) return json(core.runs.status(run));
        if (!core.runtime.store) throw unknownRun(runId(args));
        return json(storedStatus(await readStored(core, runId(args))));
      }
      case 'hatchery_runs':
        return await listRuns(core, args, ctx.mine);
      case 'hatchery_resume':
      case 'hatchery_respond': {
        const id = runId(args);
        if (!core.runtime.store)
          throw new HatcheryError(
            'USAGE',
            `${name} needs the run journal, and this server runs without one (--no-journal)`,
          );
        const live = core.runs.get(id);
        if (live && live.endedAt === undefined)
          return json(core.runs.status(live), 'the run is still going: call hatchery_result to wait for it');
        const options: { from?: string; force?: boolean; answer?: string } = {};
        if (name === 'hatchery_respond') options.answer = str(args, 'answer', true)!;
        else {
          const from = str(args, 'from', false);
          if (from !== undefined) options.from = from;
          if (args.force !== undefined && typeof args.force !== 'boolean')
            throw new HatcheryError('USAGE', '"force" must be true or false');
          if (args.force === true) options.force = true;
        }
        // Checked now, so a wrong id or a changed file answers this call instead of a later poll.
        const stored = await readStored(core, id);
        const attempt = await core.runtime.prepareResume(id, options);
        // The source goes along: a task resumed here is still a task (tasks/get reads it live).
        const { hatchery, file, source } = stored.meta;
        const { startedAt, usage } = stored.summary;
        const run = ctx.resume(id, attempt, { hatchery, file, source, startedAt, usage });
        ctx.own(id);
        if (name === 'hatchery_respond')
          run.note =
            'answered with hatchery_respond; the nodes that had finished were taken from the run journal';
        return json({ run_id: run.id, hatchery: stored.meta.hatchery, state: run.state }, WAIT_FOR_IT);
      }
      case 'hatchery_result': {
        const live = liveRun(core, args);
        const w = args.wait_seconds;
        if (w !== undefined && (typeof w !== 'number' || !Number.isFinite(w) || w < 0))
          throw new HatcheryError('USAGE', '"wait_seconds" must be a number of seconds, 0 or more');
        const seconds = Math.min(typeof w === 'number' ? w : DEFAULT_RESULT_WAIT_S, MAX_RESULT_WAIT_S);
        if (!live) {
          if (!core.runtime.store) throw unknownRun(runId(args));
          return storedResult(core, await waitStored(core, runId(args), seconds * 1000, ctx.env.signal));
        }
        const run = live;
        const finished = await core.runs.wait(run, seconds * 1000, ctx.env.signal);
        if (finished && run.result) {
          // A large output's resource may have expired since: the journal still has the output.
          if (core.runtime.store && goneOutput(core, run.result))
            return storedResult(core, await readStored(core, run.id));
          return run.result;
        }
        return json(core.runs.status(run), 'still running: call hatchery_result again to keep waiting');
      }
      case 'hatchery_cancel': {
        const run = liveRun(core, args);
        const store = core.runtime.store;
        // A suspended run is over in this process but not in its journal: it could still be answered.
        const waiting = run?.endedAt !== undefined && run.state === 'input_required';
        if (!run || (waiting && store)) {
          // A run elsewhere is asked to stop; one nobody runs (suspended, interrupted) ends here.
          if (!store) throw unknownRun(runId(args));
          await readStored(core, runId(args));
          const summary = await store.cancel(runId(args));
          if (run && summary?.status === 'cancelled') run.state = 'cancelled';
          return json({ ...(summary ? summaryView(summary) : {}), note: 'cancel requested' });
        }
        if (run.endedAt !== undefined)
          return json({ ...core.runs.status(run), note: `already finished (${run.state})` });
        run.controller.abort(new HatcheryError('ABORTED', 'the run was cancelled with hatchery_cancel'));
        await core.runs.wait(run, 5_000);
        return json(core.runs.status(run));
      }
      default:
        throw new HatcheryError('NOT_FOUND', unknownName('tool', name, [...GENERIC_TOOL_NAMES]));
    }
  } catch (err) {
    return errorResult(core, err);
  }
}
