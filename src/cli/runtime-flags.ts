import { HatcheryError } from '../core/errors.js';
import type { Budget } from '../engine/meter.js';
import type { PostgresRunStore } from '../journal/postgres/store.js';
import { stateDir } from '../journal/state-dir.js';
import type { RunStore } from '../journal/store.js';
import type { DurableEngine } from '../runtime/options.js';
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
  --allow-host HOST   let http_request and a2a: agents reach HOST (name, name:port or
                      *.domain) although it is on this machine or a private network
                      (repeatable)
  --allow-private-network
                      let http_request and a2a: agents reach every address, local and
                      private ones included
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

/** The network guard `--allow-host` and `--allow-private-network` stand for (run, serve, validate, doctor). */
export async function networkOptions(values: {
  'allow-host'?: string[];
  'allow-private-network'?: boolean;
}): Promise<{ allowHosts?: string[]; allowPrivateNetwork: boolean }> {
  const hosts = values['allow-host'];
  return {
    allowHosts: hosts && (await import('../tools/builtin/net-guard.js')).checkAllowHosts(hosts),
    allowPrivateNetwork: values['allow-private-network'] === true,
  };
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
      ...(await networkOptions(values)),
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

/** The journal flags of `run`, `serve` and `studio` (and `--state`, `--store` of `runs`). */
export const JOURNAL_FLAGS = {
  state: { type: 'string' },
  store: { type: 'string' },
  'replica-id': { type: 'string' },
  'heartbeat-timeout': { type: 'string' },
  'no-journal': { type: 'boolean' },
  'keep-runs': { type: 'string' },
  'keep-days': { type: 'string' },
} as const;

/** The flags that say which run store: what `runs` takes of JOURNAL_FLAGS. */
type StoreFlag = 'state' | 'store' | 'replica-id' | 'heartbeat-timeout';

/** The flags of JOURNAL_FLAGS that say which run store (what `runs` takes). */
export const STORE_FLAGS = {
  state: JOURNAL_FLAGS.state,
  store: JOURNAL_FLAGS.store,
  'replica-id': JOURNAL_FLAGS['replica-id'],
  'heartbeat-timeout': JOURNAL_FLAGS['heartbeat-timeout'],
} as const;

/** Help lines of the Postgres store's flags, for run, serve, studio and runs. */
export const STORE_HELP = `  --store URL         keep runs in PostgreSQL at URL (postgres://user@host/db; default
                      $HATCHERY_STORE) instead of a state folder: every process given the
                      same URL sees, cancels, answers and resumes the same runs
  --replica-id ID     this process's name among those sharing the store (default: the host's
                      name for serve, host:pid otherwise)
  --heartbeat-timeout S
                      a process sharing the store that has not beaten for S seconds is dead
                      and its runs are taken over (default 30)`;

/**
 * The run store the journal flags ask for (see journalStore) and, for a Postgres store, its durable
 * engine: runs are then DBOS workflows, recovered after a crash without repeating finished steps.
 */
export async function journalOptions(
  values: ParsedValues<typeof JOURNAL_FLAGS>,
  servedDir?: string,
  secrets: readonly string[] = [],
  server = false,
): Promise<Pick<RuntimeOptions, 'store' | 'engine'>> {
  const store = await journalStore(values, servedDir, secrets, server);
  if (store === undefined) return {};
  return { store, engine: await durableEngine(store, secrets, server) };
}

/** The durable engine of a Postgres store (DBOS, loaded only then), launched on the store's database. */
export async function durableEngine(
  store: RunStore,
  secrets: readonly string[] = [],
  server = false,
): Promise<DurableEngine | undefined> {
  if (!/^postgres(ql)?:/.test(store.location)) return undefined;
  const [{ DbosEngine }, { secretValues }] = await Promise.all([
    import('../runtime/durable/dbos.js'),
    import('../core/secrets.js'),
  ]);
  const pg = store as PostgresRunStore;
  try {
    return await DbosEngine.launch({
      store: pg,
      url: pg.connectionUrl,
      secrets: secretValues(process.env, secrets),
      // A server takes over the runs of replicas that died; a command runs only its own.
      claims: server,
    });
  } catch (err) {
    await store.close().catch(() => {});
    throw new HatcheryError(
      'STORE',
      `cannot start the durable engine on ${store.location}: ${(err as Error).message}`,
      { state: store.location },
      { cause: err },
    );
  }
}

/** The --store URL asked for (the flag, else HATCHERY_STORE), or undefined for a state folder. */
function storeUrl(values: ParsedValues<Pick<typeof JOURNAL_FLAGS, 'store'>>): string | undefined {
  const url = values.store ?? (process.env.HATCHERY_STORE || undefined);
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new HatcheryError(
      'USAGE',
      `--store (or HATCHERY_STORE) takes a PostgreSQL URL, postgres://user@host:5432/database, not "${url.replace(/:[^:@/]*@/, ':***@')}"; for a folder use --state DIR`,
    );
  }
  return url;
}

/**
 * The run store the journal flags ask for: a database with --store (or HATCHERY_STORE), else the state
 * folder; undefined with --no-journal. `server` names a serving process (its default replica id).
 */
export async function journalStore(
  values: ParsedValues<typeof JOURNAL_FLAGS>,
  servedDir?: string,
  secrets: readonly string[] = [],
  server = false,
): Promise<RunStore | undefined> {
  if (values['no-journal'] === true) {
    const given = (
      ['state', 'store', 'keep-runs', 'keep-days', 'replica-id', 'heartbeat-timeout'] as const
    ).find((k) => values[k] !== undefined);
    if (given) throw new HatcheryError('USAGE', `--${given} and --no-journal exclude each other`);
    return undefined;
  }
  const keep = {
    secrets,
    maxRuns: intOption(values['keep-runs'], 'keep-runs'),
    maxAgeDays: intOption(values['keep-days'], 'keep-days'),
  };
  const url = storeUrl(values);
  if (url !== undefined) return openPostgres(url, values, { ...keep, server });
  const only = (['replica-id', 'heartbeat-timeout'] as const).find((k) => values[k] !== undefined);
  if (only) throw new HatcheryError('USAGE', `--${only} needs --store URL (a PostgreSQL store)`);
  // Loaded when used: a command run with --no-journal does not load the journal's modules.
  const { FileRunStore } = await import('../journal/file-store.js');
  return new FileRunStore(stateDir(values.state, { servedDir }), keep);
}

/** The Postgres store at `url`; loaded only when asked for, so a plain install never loads pg. */
async function openPostgres(
  url: string,
  values: ParsedValues<Pick<typeof JOURNAL_FLAGS, StoreFlag>>,
  options: { secrets: readonly string[]; maxRuns?: number; maxAgeDays?: number; server: boolean },
): Promise<RunStore> {
  if (values.state !== undefined) throw new HatcheryError('USAGE', '--state and --store exclude each other');
  const timeout = intOption(values['heartbeat-timeout'], 'heartbeat-timeout');
  const { PostgresRunStore } = await import('../journal/postgres/store.js');
  return PostgresRunStore.open(url, {
    ...options,
    replicaId: values['replica-id'],
    heartbeatTimeoutMs: timeout === undefined ? undefined : timeout * 1000,
  });
}

/** The run store `runs` and `run --replay-run` read: --store URL (or HATCHERY_STORE), else the state folder. */
export async function openRunStore(
  values: ParsedValues<Pick<typeof JOURNAL_FLAGS, StoreFlag>>,
): Promise<RunStore> {
  const url = storeUrl(values);
  if (url !== undefined) return openPostgres(url, values, { secrets: [], server: false });
  const { FileRunStore } = await import('../journal/file-store.js');
  return new FileRunStore(stateDir(values.state));
}
