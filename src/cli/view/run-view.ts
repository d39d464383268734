/**
 * What `run` and `runs resume` show of a run on stderr, chosen once per command: the live tree on a
 * terminal, plain lines on a pipe, JSON lines with --events, nothing with --quiet; --verbose adds the
 * prompts, replies and tool calls. Every form is a listener on the run's events; none of them is
 * loaded or called when the command is quiet.
 */
import { HatcheryError } from '../../core/errors.js';
import { secretValues } from '../../core/secrets.js';
import type { AskFn, RunEvent, RunListener } from '../../engine/contracts.js';
import type { Usage } from '../../providers/types.js';
import { RunTree } from '../../runtime/run-tree.js';
import { printable } from '../print.js';
import { eventLine } from './events.js';
import { plainLine } from './lines.js';
import type { LiveView, TerminalStream } from './live.js';
import { colorEnabled, paint } from './style.js';
import { VerboseText } from './verbose.js';

/** The options of the view, for parseArgs (run and runs resume take them). */
export const VIEW_FLAGS = {
  quiet: { type: 'boolean', short: 'q' },
  verbose: { type: 'boolean' },
  events: { type: 'boolean' },
} as const;

/** Help lines of VIEW_FLAGS. */
export const VIEW_HELP = `  --quiet, -q         no progress on stderr
  --verbose           also print each model call's prompt and reply and each tool call's
                      arguments and result (secrets redacted, long texts cut)
  --events            print the run's events as JSON lines on stderr instead of the progress
                      (secrets redacted; for scripts and log collectors)`;

/** The view flags of parsed options; contradictory ones are a USAGE error. */
export function viewFlags(values: { quiet?: boolean; verbose?: boolean; events?: boolean }): ViewFlags {
  const on = (['quiet', 'verbose', 'events'] as const).filter((k) => values[k] === true);
  if (on.length > 1) {
    throw new HatcheryError(
      'USAGE',
      `${on.map((k) => `--${k}`).join(' and ')} exclude each other: --events already holds the prompts, replies and tool calls, --quiet prints nothing`,
    );
  }
  return { quiet: values.quiet === true, verbose: values.verbose === true, events: values.events === true };
}

/** The view flags of a command line. */
export interface ViewFlags {
  quiet?: boolean;
  verbose?: boolean;
  events?: boolean;
  /** The command needs the run's totals afterwards (--json): listen even when quiet. */
  totals?: boolean;
}

/** What the view saw of the top-level run: its id, and its totals once it ended. */
export interface RunTotals {
  runId?: string;
  usage?: Usage;
  steps?: number;
  ms?: number;
}

/** The view of one run: the listener to pass to the run, and what to do around it. */
export interface RunView {
  /** Pass as the run's onEvent (undefined when nothing listens: a quiet command). */
  readonly onEvent: RunListener | undefined;
  /** Which form the view took. */
  readonly mode: 'live' | 'plain' | 'events' | 'quiet';
  /** Wraps a terminal AskFn so the live frame steps aside while a question is asked. */
  ask(ask: AskFn | undefined): AskFn | undefined;
  /** What the view saw of the top-level run (for --json, also on failure). */
  totals(): RunTotals;
  /** Ends the view: the final frame stays on the terminal. Call once the run settled. */
  close(): void;
}

/** Where and how the view draws; the defaults are the process's. */
export interface ViewOptions {
  stream?: TerminalStream;
  env?: Readonly<Record<string, string | undefined>>;
  /** The run's name before its first event (a resumed run learns it from its run_start). */
  name?: string;
  clock?: () => number;
}

/** Opens the view `flags` ask for; log-update is imported only for a live view. */
export async function openRunView(flags: ViewFlags, options: ViewOptions = {}): Promise<RunView> {
  const stream = options.stream ?? process.stderr;
  const env = options.env ?? process.env;
  const clock = options.clock ?? Date.now;
  const totals: RunTotals = {};
  const track = (e: RunEvent) => {
    if (e.depth !== 0) return;
    if (e.type === 'run_start') totals.runId = e.runId;
    else if (e.type === 'run_end')
      Object.assign(totals, { runId: e.runId, usage: e.usage, steps: e.steps, ms: e.ms });
  };
  const base = { ask: (a: AskFn | undefined) => a, totals: () => totals, close: () => {} };
  if (flags.events) {
    const secrets = secretValues(env);
    return {
      ...base,
      mode: 'events',
      onEvent: (e) => {
        track(e);
        stream.write(`${printable(eventLine(e, clock(), secrets), secrets)}\n`);
      },
    };
  }
  if (flags.quiet) return { ...base, mode: 'quiet', onEvent: flags.totals ? track : undefined };

  // A live view needs a terminal that understands cursor codes.
  const live = stream.isTTY === true && env.TERM !== 'dumb';
  const p = paint(colorEnabled(stream, env));
  const tree = new RunTree(options.name ?? 'run', clock());
  const verbose = flags.verbose ? new VerboseText(secretValues(env), p) : undefined;
  let view: LiveView | undefined;
  if (live) {
    const { LiveView } = await import('./live.js');
    view = await LiveView.open(stream, tree, p, clock);
  }
  const out = (text: string) => {
    if (view) view.print(text);
    else stream.write(`${text}\n`);
  };
  const onEvent: RunListener = (e) => {
    track(e);
    const now = clock();
    if (e.type === 'run_start' && e.depth === 0) {
      tree.root.label = e.hatchery;
      tree.root.start = now;
    }
    const entry = tree.apply(e, now);
    const block = verbose?.block(e, entry?.depth ?? 1);
    if (view) {
      if (block) view.print(block);
      view.changed();
      if (e.type === 'run_end' && e.depth === 0) {
        view.finish();
        stream.write(`${plainLine(e, entry, p)}\n`);
      }
      return;
    }
    const line = plainLine(e, entry, p);
    if (line !== undefined) out(line);
    if (block) out(block);
  };
  return {
    ...base,
    mode: live ? 'live' : 'plain',
    onEvent,
    close: () => view?.finish(),
    ask: (ask) => {
      if (!ask || !view) return ask;
      const v = view;
      // Parallel branches may ask at once (ttyAsk takes them in turn): draw again after the last one.
      let asking = 0;
      return async (q, signal) => {
        asking++;
        v.pause();
        try {
          return await ask(q, signal);
        } finally {
          if (--asking === 0) v.resume();
        }
      };
    },
  };
}
