import { createInterface } from 'node:readline/promises';
import { text } from 'node:stream/consumers';
import { HatcheryError } from '../core/errors.js';
import { Cassette } from '../runtime/cassette/cassette.js';
import { type RunResult, Runtime } from '../runtime/runtime.js';
import { promptLabel } from '../schema/suggest.js';
import { EXIT, keyValues, parseCommand } from './args.js';
import {
  JOURNAL_FLAGS,
  journalOptions,
  RUNTIME_FLAGS,
  RUNTIME_HELP,
  runtimeOptions,
  STORE_HELP,
} from './runtime-flags.js';
import { viewRun } from './view/outcome.js';
import { VIEW_FLAGS, VIEW_HELP, viewFlags } from './view/run-view.js';

/** Help text of `hatchery-mcp run`. */
export const RUN_HELP = `Usage: hatchery-mcp run <file> [options]

Runs one hatchery and prints its final output on stdout. Progress goes to stderr: on a
terminal a live tree of the run (nodes, branches, tool and model calls, times, tokens, cost,
retries); elsewhere one line per event.

Options:
  --input TEXT        the run's input ({{ ctx.input }}); "-" reads it from stdin
                      (stdin is also read when it is piped and --input is absent)
  --set NAME=VALUE    value of a declared input (repeatable); missing ones are asked
                      for on a terminal
${RUNTIME_HELP}
  --record FILE       write every model call and MCP/http_request tool call of the run
                      to the cassette FILE (JSON lines; secrets redacted)
  --replay FILE       answer those calls from the cassette FILE: no network, no API key
                      (whatever keys or HATCHERY_MODEL are set: a drone naming no model uses
                      the one recorded); a call it does not hold fails, naming the node, with a diff
  --record-missing    with --replay: make the calls the cassette lacks and append them
  --replay-run ID     re-run the past run ID (or a unique prefix of it) from its journal in
                      the state folder: its model calls and MCP/http_request tool calls are
                      answered from the journal (no network, no API key), as with --replay;
                      its input and --set values are the past run's unless given anew
  --state DIR         keep the run's journal in DIR (default: $HATCHERY_STATE, else
                      .hatchery/runs in the working folder); runs never write there
  --no-journal        keep no journal of the run
  --keep-runs N       keep the newest N runs in the state folder (default 1000)
  --keep-days N       delete finished runs older than N days (default 30); pruning
                      happens when a command opens the state folder
${STORE_HELP}
${VIEW_HELP}
  --json              print {"output", "value", "usage", "cost_usd", "steps"} as JSON instead of
                      the text; a failure prints {"error", "code", "run_id", "usage", "cost_usd",
                      "steps"} (BUDGET_EXHAUSTED: with "limit", "spent" and the "partial" outputs
                      of the nodes that finished)
  -h, --help          show this help

Questions: an ask node (or approve: true on a tool or script node) prompts on the terminal
(stderr; a numbered choice takes its number). Without a terminal on stdin the run stops
waiting for input: the question is printed with the command that answers it,
hatchery-mcp runs resume <run id> [--state DIR] --answer TEXT (--state when the run used
one). A run with --no-journal cannot be answered later: run it on a terminal, or keep a journal.

Exit codes: 0 success, 1 the run failed, 2 bad command line, 3 invalid hatchery file,
4 waiting for input (answer with runs resume), 5 budget exhausted (BUDGET_EXHAUSTED),
130 interrupted (Ctrl-C, SIGTERM) or cancelled (runs cancel).`;

/** Asks for each missing declared input on the terminal (stderr for the prompt, stdout stays clean). */
async function askMissing(
  prompts: Record<string, string>,
  missing: string[],
): Promise<Record<string, string>> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const answers: Record<string, string> = {};
  try {
    for (const k of missing) answers[k] = await rl.question(`${prompts[k] || k}: `);
  } finally {
    rl.close();
  }
  return answers;
}

/** `hatchery-mcp run`: returns the exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'run', RUN_HELP, {
    input: { type: 'string', short: 'i' },
    set: { type: 'string', multiple: true },
    ...RUNTIME_FLAGS,
    ...JOURNAL_FLAGS,
    ...VIEW_FLAGS,
    json: { type: 'boolean' },
    record: { type: 'string' },
    replay: { type: 'string' },
    'record-missing': { type: 'boolean' },
    'replay-run': { type: 'string' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  const file = positionals[0];
  if (!file || positionals.length > 1) {
    throw new HatcheryError('USAGE', `run takes one hatchery file\n\n${RUN_HELP}`);
  }
  const flags = viewFlags(values);
  const vars = keyValues(values.set, 'set');
  const options = await runtimeOptions(values);
  const replayRun = values['replay-run'];
  if (replayRun !== undefined && (values.record ?? values.replay ?? values['record-missing']) !== undefined) {
    throw new HatcheryError(
      'USAGE',
      '--replay-run excludes --record, --replay and --record-missing: it answers only from the journal',
    );
  }
  // The runs command's journal reading is loaded only for a replay of a past run.
  const replayed =
    replayRun !== undefined
      ? await import('./runs.js').then((m) => m.journalReplay(values, replayRun))
      : undefined;
  const cassette =
    replayed?.cassette ??
    (await openCassette(values.record, values.replay, values['record-missing'] === true));
  if (cassette) options.cassette = cassette;
  const { store, engine } = await journalOptions(values);
  options.store = store;
  options.engine = engine;
  const runtime = new Runtime(options);
  const hatchery = await runtime.load(file);

  let input = values.input;
  const stdinIsTty = process.stdin.isTTY === true;
  const terminal = stdinIsTty && values.input !== '-';
  if (input === '-' || (input === undefined && !stdinIsTty)) {
    input = (await text(process.stdin)).replace(/\r?\n$/, '');
    // Nothing on stdin (</dev/null, an empty pipe) is no input: a run that needs one stops before
    // any model is paid (runtime's requireInput) instead of asking the model an empty question.
    if (input === '' && (hatchery.inputRequired || replayed)) input = undefined;
  }
  // A replayed run asks what the past run asked: its input and declared inputs, unless given anew.
  if (input === undefined) input = replayed?.input;
  if (replayed?.vars) Object.assign(vars, { ...replayed.vars, ...vars });
  if (input === undefined && stdinIsTty && hatchery.inputRequired) {
    const prompt = (hatchery.def.input_prompt && promptLabel(hatchery.def.input_prompt)) || 'input';
    input = (await askMissing({ input: prompt }, ['input'])).input;
  }

  const missing = Object.keys(hatchery.inputs).filter((k) => vars[k] === undefined);
  if (missing.length > 0 && terminal) Object.assign(vars, await askMissing(hatchery.inputs, missing));
  return viewRun(
    runtime,
    { flags, json: values.json === true, name: hatchery.name, terminal, location: store?.location, jsonOf },
    (run) => runtime.run(hatchery, { input, vars, source: 'cli', ...run }),
  );
}

/** The --json object of a run. */
function jsonOf(result: RunResult): Record<string, unknown> {
  const { output, value, usage, steps, journal } = result;
  return { output, value, usage, cost_usd: usage.costUsd, steps, ...(journal ? { journal } : {}) };
}

/** The cassette of --record / --replay (--record-missing), or undefined; wrong combinations are USAGE errors. */
async function openCassette(
  record: string | undefined,
  replay: string | undefined,
  recordMissing: boolean,
): Promise<Cassette | undefined> {
  if (record !== undefined && replay !== undefined) {
    throw new HatcheryError(
      'USAGE',
      '--record and --replay exclude each other: use --replay FILE --record-missing to add to a cassette',
    );
  }
  if (recordMissing && replay === undefined) {
    throw new HatcheryError('USAGE', '--record-missing needs --replay FILE');
  }
  if (record !== undefined) return Cassette.open({ file: record, mode: 'record' });
  if (replay !== undefined) return Cassette.open({ file: replay, mode: 'replay', recordMissing });
  return undefined;
}
