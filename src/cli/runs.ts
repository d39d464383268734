import { HatcheryError } from '../core/errors.js';
import { journalEntries } from '../journal/replay.js';
import { runsCommandLine } from '../journal/state-dir.js';
import {
  type JournalRecord,
  RUN_STATUSES,
  type RunStatus,
  type RunStore,
  type RunSummary,
  type StoredRun,
} from '../journal/store.js';
import type { Usage } from '../providers/types.js';
import { Cassette } from '../runtime/cassette/cassette.js';
import { Runtime } from '../runtime/runtime.js';
import { EXIT, intOption, parseCommand } from './args.js';
import { printableJson, printErr, printOut } from './print.js';
import {
  durableEngine,
  openRunStore,
  RUNTIME_FLAGS,
  runtimeOptions,
  STORE_FLAGS,
  STORE_HELP,
} from './runtime-flags.js';
import { seconds, usageText } from './view/format.js';
import { viewRun } from './view/outcome.js';
import { VIEW_FLAGS, VIEW_HELP, viewFlags } from './view/run-view.js';

/** Help text of `hatchery-mcp runs`. */
export const RUNS_HELP = `Usage: hatchery-mcp runs <list|show|resume|cancel> [ID] [options]

Shows and resumes the runs kept in the state folder (one journal per run).

  runs list [--status S] [--hatchery NAME] [--limit N]
                      the runs, newest first (S: running, succeeded, failed, cancelled,
                      interrupted, input_required; default limit 50)
  runs show ID        the nodes the run executed, in order, with duration, tokens and
                      cost, its error and the question it waits on
  runs resume ID [--from NODE] [--force] [--answer TEXT]
                      runs it on from the node that failed or was interrupted: nodes that
                      finished are taken from the journal (no model or tool call, no side
                      effect again); --from NODE runs again from NODE's first execution
                      (for a node inside a parallel or map branch: from that fan-out);
                      a run whose file changed is refused unless --force (then the changed
                      nodes and everything after the first of them run again); --answer
                      answers the question a suspended run waits on
  runs cancel ID      stops a running run (in whichever process runs it), or ends a
                      suspended or interrupted one as cancelled

ID may be a unique prefix of a run id (at least 6 characters).

Options:
  --state DIR         the state folder (default $HATCHERY_STATE, else .hatchery/runs)
${STORE_HELP}
  --json              print JSON instead of text (resume: a failure too, with the run's totals)
  resume shows the run's progress as run does:
${VIEW_HELP}
  resume also takes run's --allow-root, --allow-write, --allow-shell, --allow-host,
  --allow-private-network, --mcp-config and --max-steps.
  -h, --help          show this help

Exit codes: as "run": 0 success, 1 failed (or refused), 2 bad command line,
3 invalid hatchery file, 4 waiting for input again, 5 budget exhausted, 130 interrupted
or cancelled.`;

/** What a run id may look like: the store's ids are UUIDs; nothing that could name another path. */
const ID_SHAPE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** The shortest prefix accepted for a run id, as git accepts short hashes. */
const MIN_PREFIX = 6;

/** The run `id` names (itself or a unique prefix) and its full id; NOT_FOUND or USAGE otherwise. */
async function findRun(store: RunStore, id: string): Promise<{ full: string; run: StoredRun }> {
  if (!ID_SHAPE.test(id)) {
    throw new HatcheryError(
      'USAGE',
      `"${id}" is not a run id (letters, digits, - and _ only); list the runs with: ${runsCommandLine(['list'], store.location)}`,
    );
  }
  let full = id;
  let run = await store.read(id);
  if (!run && id.length >= MIN_PREFIX) {
    const hits = await store.list({ idPrefix: id, limit: Number.MAX_SAFE_INTEGER });
    if (hits.length > 1) {
      throw new HatcheryError(
        'USAGE',
        `run id prefix "${id}" is ambiguous: it starts ${hits.length} runs (${hits
          .slice(0, 5)
          .map((r) => r.id)
          .join(', ')}${hits.length > 5 ? ', ...' : ''}); give more characters`,
      );
    }
    full = hits[0]?.id ?? id;
    if (hits.length === 1) run = await store.read(full);
  }
  if (run) return { full, run };
  throw new HatcheryError(
    'NOT_FOUND',
    `no run "${id}" in ${store.location}; list the runs there with: ${runsCommandLine(['list'], store.location)} (another state folder: pass it with --state DIR)`,
    { run: id, state: store.location },
  );
}

function when(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** One node execution as `runs show` lists it. */
export interface ShownNode {
  node: string;
  /** Nesting: scope path ('' top level, `/3.1` a fan-out branch), and depth of nested runs. */
  path?: string;
  depth: number;
  seq?: number;
  ms?: number;
  usage?: Usage;
  attempt: number;
}

/** The node executions of a run's records, in the order they finished, with the attempt of each. */
export function shownNodes(records: readonly JournalRecord[]): ShownNode[] {
  const out: ShownNode[] = [];
  let attempt = 1;
  for (const r of records) {
    if (r.type === 'resumed') attempt++;
    if (r.type !== 'node_end' || typeof r.node !== 'string') continue;
    const n: ShownNode = { node: r.node, depth: typeof r.depth === 'number' ? r.depth : 0, attempt };
    if (typeof r.path === 'string') n.path = r.path;
    if (typeof r.seq === 'number') n.seq = r.seq;
    if (typeof r.ms === 'number') n.ms = r.ms;
    if (r.usage && typeof r.usage === 'object') n.usage = r.usage as Usage;
    out.push(n);
  }
  return out;
}

function showText(s: RunSummary, nodes: readonly ShownNode[], location: string): string {
  const lines = [
    `run ${s.id}: ${s.hatchery}, ${s.status}${s.attempts > 1 ? ` after ${s.attempts} attempts` : ''}`,
    `file: ${s.file || '(in memory)'}`,
    `started ${when(s.startedAt)}${s.endedAt ? `, ended ${when(s.endedAt)}` : ''}, ${s.steps} step${s.steps === 1 ? '' : 's'}${usageText(s.usage) ? `, ${usageText(s.usage)}` : ''}`,
  ];
  let attempt = 1;
  for (const n of nodes) {
    if (n.attempt !== attempt) {
      attempt = n.attempt;
      lines.push(`  -- attempt ${attempt} --`);
    }
    // Branches nest by their path's segments, nested runs by depth.
    const level = (n.path ? n.path.split('/').length - 1 : 0) + n.depth;
    const pad = '  '.repeat(level + 1);
    const branch = level > 0 ? '└ ' : '';
    const facts = [n.ms !== undefined ? seconds(n.ms) : '', usageText(n.usage)].filter(Boolean).join(', ');
    lines.push(`${pad}${branch}${n.node}${facts ? ` (${facts})` : ''}`);
  }
  if (s.node && s.status !== 'succeeded') lines.push(`at node: ${s.node}`);
  if (s.error) lines.push(`error${s.code ? ` [${s.code}]` : ''}: ${s.error}`);
  if (s.question) {
    const choices = s.question.choices ? ` (choices: ${s.question.choices.join(', ')})` : '';
    lines.push(
      `waiting for an answer (node ${s.question.node}): ${s.question.question}${choices}`,
      `answer with: ${runsCommandLine(['resume', s.id], location, ['--answer', 'TEXT'])}`,
    );
  }
  if (s.output !== undefined && s.status === 'succeeded') lines.push('output:', s.output);
  return lines.join('\n');
}

function listText(runs: readonly RunSummary[]): string {
  if (runs.length === 0) return 'no runs';
  return runs
    .map((r) => {
      const facts = [`${r.steps} step${r.steps === 1 ? '' : 's'}`, usageText(r.usage)].filter(Boolean);
      const at = r.status === 'succeeded' || !r.node ? '' : ` at ${r.node}`;
      return `${r.id}  ${r.status.padEnd(14)} ${r.hatchery}  ${when(r.startedAt)}  ${facts.join(', ')}${at}`;
    })
    .join('\n');
}

/** `hatchery-mcp runs`: returns the exit code. */
export async function runsCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'runs', RUNS_HELP, {
    ...STORE_FLAGS,
    json: { type: 'boolean' },
    status: { type: 'string' },
    hatchery: { type: 'string' },
    limit: { type: 'string' },
    from: { type: 'string' },
    force: { type: 'boolean' },
    answer: { type: 'string' },
    ...VIEW_FLAGS,
    ...RUNTIME_FLAGS,
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  const [sub, id, ...extra] = positionals;
  const needsId = sub === 'show' || sub === 'resume' || sub === 'cancel';
  if (!sub || !['list', 'show', 'resume', 'cancel'].includes(sub)) {
    throw new HatcheryError(
      'USAGE',
      `runs needs one of list, show ID, resume ID, cancel ID${sub ? `, not "${sub}"` : ''}\n\n${RUNS_HELP}`,
    );
  }
  if ((needsId && (id === undefined || extra.length > 0)) || (!needsId && id !== undefined)) {
    throw new HatcheryError('USAGE', `runs ${sub} ${needsId ? 'takes one run id' : 'takes no argument'}`);
  }
  const store = await openRunStore(values);
  try {
    if (sub === 'list') {
      const status = values.status as RunStatus | undefined;
      if (status !== undefined && !RUN_STATUSES.includes(status)) {
        throw new HatcheryError(
          'USAGE',
          `--status must be one of ${RUN_STATUSES.join(', ')}, got "${status}"`,
        );
      }
      const skipped: string[] = [];
      const runs = await store.list({
        status,
        hatchery: values.hatchery,
        limit: intOption(values.limit, 'limit'),
        skipped: (_run, why) => skipped.push(why),
      });
      printOut(`${values.json ? printableJson(runs) : listText(runs)}\n`);
      if (skipped.length > 0) {
        printErr(
          `warning: ${skipped.length} journal file${skipped.length === 1 ? '' : 's'} in ${store.location} could not be read and ${skipped.length === 1 ? 'was' : 'were'} left out; first: ${skipped[0]}\n`,
        );
      }
      return EXIT.OK;
    }
    const { full, run } = await findRun(store, id!);
    if (sub === 'show') {
      const nodes = shownNodes(run.records);
      printOut(
        `${values.json ? printableJson({ ...run.summary, nodes }) : showText(run.summary, nodes, store.location)}\n`,
      );
      return EXIT.OK;
    }
    if (sub === 'cancel') {
      const s = await store.cancel(full);
      if (!s) throw new HatcheryError('NOT_FOUND', `no run "${full}" in ${store.location}`);
      printOut(
        values.json
          ? `${printableJson(s)}\n`
          : s.status === 'cancelled'
            ? `cancelled run ${full}\n`
            : `asked the process running ${full} to stop it\n`,
      );
      return EXIT.OK;
    }
    const flags = viewFlags(values);
    // On a Postgres store the resumed attempt is a workflow of the engine, like every run there.
    const engine = await durableEngine(store);
    const runtime = new Runtime({ ...(await runtimeOptions(values)), store, engine });
    const { from, force, answer } = values;
    return await viewRun(
      runtime,
      {
        flags,
        json: values.json === true,
        // Questions after the answered one are asked on a terminal; without one the run waits again.
        terminal: process.stdin.isTTY === true,
        location: store.location,
        runId: full,
        jsonOf: ({ runId, output, value, usage, steps }) => ({ runId, output, value, usage, steps }),
      },
      (run) => runtime.resume(full, { from, force: force === true, answer, ...run }),
    );
  } finally {
    await store.close();
  }
}

/**
 * The journal of run `id` (a unique prefix will do) as a replaying cassette (run --replay-run): its
 * model calls and MCP/http_request tool calls are answered from it, with no network and no API key;
 * with the run's inputs, which the replay uses unless it is given others.
 */
export async function journalReplay(where: Parameters<typeof openRunStore>[0], id: string) {
  const store = await openRunStore(where);
  try {
    const { full, run } = await findRun(store, id);
    const cassette = Cassette.fromEntries(journalEntries(run.records), {
      file: store.location,
      source: `the journal of run ${full}`,
      hint: 'the run made calls this one does not (another input, an edited file?); run it for real instead',
    });
    return { cassette, input: run.meta.input, vars: run.meta.vars };
  } finally {
    await store.close();
  }
}
