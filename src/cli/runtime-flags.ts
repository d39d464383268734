import { HatcheryError } from '../core/errors.js';
import type { Budget } from '../engine/meter.js';
import type { FileRunStore } from '../journal/file-store.js';
import { stateDir } from '../journal/state-dir.js';
import type { RuntimeOptions } from '../runtime/runtime.js';
import { intOption, type ParsedValues } from './args.js';

/** The options `run` and `serve` share: what runs may read, write, run and reach, and their step budget. */
export const RUNTIME_FLAGS = {
  'max-steps': { type: 'string' },
  'allow-root': { type: 'string', multiple: true },
  'allow-write': { type: 'string', multiple: true },
  'allow-shell': { type: 'boolean' },
  'allow-host': { type: 'string', multiple: true },
  'allow-private-network': { type: 'boolean' },
  'mcp-config': { type: 'string' },
  'budget-tokens': { type: 'string' },
  'budget-cost-usd': { type: 'string' },
  'budget-tool-calls': { type: 'string' },
  'budget-model-calls': { type: 'string' },
  'budget-wall-ms': { type: 'string' },
  prices: { type: 'string' },
  'max-reply-bytes': { type: 'string' },
  'max-render-chars': { type: 'string' },
} as const;

/** Help lines of RUNTIME_FLAGS, for the help texts of run, serve and studio. */
export const RUNTIME_HELP = `  --allow-root DIR    let files, fread and file tools use DIR too (repeatable)
  --allow-write DIR   let runs write in DIR (repeatable). Runs write only below the working
                      folder and these roots, never in the served folder or a hatchery's
                      folder unless DIR is that folder or inside it (risk: a model could
                      plant a tool); hatchery files are never written
  --allow-shell       enable the shell_exec tool
  --allow-host HOST   let http_request reach HOST (name, name:port or *.domain) although it
                      is on this machine or a private network (repeatable)
  --allow-private-network
                      let http_request reach every address, local and private ones included
  --mcp-config FILE   MCP servers ({"mcpServers": {...}}) for mcp: tools
  --max-steps N       maximum node executions per run (overrides the file's max_steps;
                      default 100)
  --budget-tokens N   end a run with BUDGET_EXHAUSTED once its model calls used N tokens
  --budget-cost-usd N ... once it cost N US dollars (models with a known price)
  --budget-tool-calls N
                      ... once it made N tool calls
  --budget-model-calls N
                      ... once it made N model calls
  --budget-wall-ms N  ... after N milliseconds; for each limit the smaller of the flag
                      and the file's budget wins
  --prices FILE       model prices {"vendor:model": {"input", "output", "cached_input"}} in
                      USD per million tokens, overriding the files' and the built-in ones
  --max-reply-bytes N fail a model call whose reply (decoded, streamed or not) passes N
                      bytes (default 8388608); memory stays bounded whatever an endpoint sends
  --max-render-chars N
                      most characters a template may print, join with ~ or read with fread
                      in one render (default 8388608); past it the node fails with TEMPLATE`;

const BUDGET_FLAGS = [
  ['budget-tokens', 'tokens'],
  ['budget-cost-usd', 'cost_usd'],
  ['budget-tool-calls', 'tool_calls'],
  ['budget-model-calls', 'model_calls'],
  ['budget-wall-ms', 'wall_ms'],
] as const;

/** The --budget-* limits, or undefined when none is given; each must be a positive number. */
function budgetOptions(values: ParsedValues<typeof RUNTIME_FLAGS>): Budget | undefined {
  let budget: Budget | undefined;
  for (const [flag, key] of BUDGET_FLAGS) {
    const raw = values[flag];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new HatcheryError('USAGE', `--${flag} must be a positive number, got "${raw}"`);
    budget ??= {};
    budget[key] = n;
  }
  return budget;
}

/**
 * The Runtime options the shared flags stand for (and run's cassette files); bad values are USAGE
 * errors naming the flag. The modules that read --mcp-config (tools/mcp-entry), check --allow-host
 * and read --prices (with node:dns and node:net) are imported only when those flags are given:
 * `serve` answers its first tools/list without them.
 */
export async function runtimeOptions(
  values: ParsedValues<typeof RUNTIME_FLAGS> & { record?: string; replay?: string },
): Promise<RuntimeOptions> {
  const hosts = values['allow-host'];
  const config = values['mcp-config'];
  const mcpServers = config ? await (await import('./config.js')).readMcpConfig(config) : undefined;
  const options: RuntimeOptions = {
    allowRoots: values['allow-root'],
    allowWrite: values['allow-write'],
    maxSteps: intOption(values['max-steps'], 'max-steps'),
    maxReplyBytes: intOption(values['max-reply-bytes'], 'max-reply-bytes'),
    maxRenderChars: intOption(values['max-render-chars'], 'max-render-chars'),
    tools: {
      allowShell: values['allow-shell'] === true,
      allowHosts: hosts && (await import('../tools/builtin/net-guard.js')).checkAllowHosts(hosts),
      allowPrivateNetwork: values['allow-private-network'] === true,
      mcpServers,
    },
  };
  // A run that rewrote a file the process was started with would plant code, prices or answers for the next start.
  const files = (['mcp-config', 'prices', 'record', 'replay'] as const).filter(
    (f) => values[f] !== undefined,
  );
  if (files.length)
    options.protectedFiles = files.map((f) => ({ file: values[f] as string, flag: `--${f}` }));
  const budget = budgetOptions(values);
  if (budget) options.budget = budget;
  if (values.prices !== undefined)
    options.prices = (await import('../providers/prices.js')).readPricesFile(values.prices);
  return options;
}

/** The journal flags of `run` and `serve` (and `--state` of `runs`). */
export const JOURNAL_FLAGS = {
  state: { type: 'string' },
  'no-journal': { type: 'boolean' },
  'keep-runs': { type: 'string' },
  'keep-days': { type: 'string' },
} as const;

/** The run store the journal flags ask for, or undefined with --no-journal. */
export async function journalStore(
  values: ParsedValues<typeof JOURNAL_FLAGS>,
  servedDir?: string,
  secrets: readonly string[] = [],
): Promise<FileRunStore | undefined> {
  if (values['no-journal'] === true) {
    const given = (['state', 'keep-runs', 'keep-days'] as const).find((k) => values[k] !== undefined);
    if (given) throw new HatcheryError('USAGE', `--${given} and --no-journal exclude each other`);
    return undefined;
  }
  // Loaded when used: a command run with --no-journal does not load the journal's modules.
  const { FileRunStore } = await import('../journal/file-store.js');
  return new FileRunStore(stateDir(values.state, { servedDir }), {
    secrets,
    maxRuns: intOption(values['keep-runs'], 'keep-runs'),
    maxAgeDays: intOption(values['keep-days'], 'keep-days'),
  });
}

/** The run store of the state folder `runs` and `run --replay-run` read (see stateDir). */
export async function openRunStore(state: string | undefined): Promise<FileRunStore> {
  const { FileRunStore } = await import('../journal/file-store.js');
  return new FileRunStore(stateDir(state));
}
