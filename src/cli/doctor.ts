import { stat } from 'node:fs/promises';
import path from 'node:path';
import { raceSignal } from '../core/cancel.js';
import { formatError, HatcheryError } from '../core/errors.js';
import { shellQuote } from '../core/shell.js';
import type { NetworkOptions } from '../engine/contracts.js';
import { listHatcheryFileNames } from '../loader/load.js';
import { modelSpecProblem, ProviderRegistry } from '../providers/resolve.js';
import { KEY_VARS_TEXT, VENDORS, vendorDefault } from '../providers/vendors.js';
import type { A2aAgentDef, McpServerDef } from '../schema/hatchery.js';
import { anchored } from '../tools/mcp-entry.js';
import { EXIT, intOption, noArguments, parseCommand } from './args.js';
import { readMcpConfig } from './config.js';
import { printableJson, printOut } from './print.js';
import { networkOptions } from './runtime-flags.js';
import { checkFile } from './validate.js';
import { findCommand } from './which.js';

/** Help text of `hatchery-mcp doctor`. */
export const DOCTOR_HELP = `Usage: hatchery-mcp doctor [--dir DIR] [--mcp-config FILE] [--allow-host HOST] [--json]

Checks what serving and running hatcheries needs, one line per check (ok, warning or problem; each
problem says what to do): the Node version, the API keys set (never their values) and the default
model they select, HATCHERY_MODEL and the base URLs, the folder (how many hatcheries load, the first
problem of each file that does not), each mcpServers entry of its files and of --mcp-config (a
command is looked up on PATH, then started, and its tools listed), and each a2aAgents entry of its
files (its agent card is fetched through the network guard runs use, and its skills listed).

Options:
  --dir DIR           folder of hatchery files (default ./hatchery)
  --mcp-config FILE   MCP servers ({"mcpServers": {...}}) to check as well
  --timeout SECONDS   time each MCP server gets to start and list its tools, and each A2A
                      agent to send its card (default 20)
  --allow-host HOST   an A2A agent on this machine or a private network that may be reached
                      (as for run and serve; repeatable)
  --allow-private-network
                      every address may be reached
  --json              one JSON object: every check and the counts
  -h, --help          show this help

Exit codes: 0 no problem (warnings allowed), 1 at least one problem, 2 bad command line.`;

/** The minimum Node version (package.json engines). */
const MIN_NODE: readonly [number, number] = [20, 19];

/** The outcome of one check. */
export interface Check {
  /** What was checked: "node", "OPENAI_API_KEY", a file, `mcpServers "x"`. */
  name: string;
  status: 'ok' | 'warning' | 'problem';
  message: string;
  /** What to do about it (warnings and problems). */
  fix?: string;
}

const checkOf =
  (status: Check['status']) =>
  (name: string, message: string, fix?: string): Check => ({ name, status, message, fix });
const ok = checkOf('ok');
const warn = checkOf('warning');
const problem = checkOf('problem');

/** The Node version check. */
export function nodeCheck(version = process.versions.node): Check {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const good = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return good
    ? ok('node', `Node ${version} (${MIN_NODE.join('.')} or later needed)`)
    : problem(
        'node',
        `Node ${version} is too old: hatchery-mcp needs ${MIN_NODE.join('.')} or later`,
        'install a current Node LTS (https://nodejs.org) and run hatchery-mcp with it',
      );
}

/** The API key, HATCHERY_MODEL and base URL checks; never shows any part of a value. */
export function modelChecks(env: Readonly<Record<string, string | undefined>>): Check[] {
  const checks: Check[] = [];
  const keys = VENDORS.map((v) => v.keyVar);
  for (const { id, keyVar: k } of VENDORS) {
    const value = env[k];
    if (!value) continue;
    checks.push(
      value.trim() !== value
        ? warn(k, 'is set, but its value starts or ends with spaces or a line break', `set ${k} without them`)
        : ok(k, `is set (alone it selects ${vendorDefault(id)})`),
    );
  }
  // A registry that only resolves names: its providers are never built for a call.
  const registry = new ProviderRegistry({
    env,
    factory: () => ({ id: 'doctor', chat: () => Promise.reject(new Error('doctor makes no model call')) }),
  });
  const defaultModel = registry.defaultModel(false);
  if (!keys.some((k) => env[k])) {
    checks.push(
      warn(
        'API key',
        `neither ${keys.join(' nor ')} is set: drones run only from an MCP client that offers sampling, and \`hatchery-mcp test\` replays cassettes`,
        `set ${KEY_VARS_TEXT} (in the shell for run, in the "env" of the client config for the server)`,
      ),
    );
  }
  const specProblem = env.HATCHERY_MODEL && modelSpecProblem(env.HATCHERY_MODEL);
  if (specProblem) checks.push(problem('HATCHERY_MODEL', specProblem, 'fix or unset HATCHERY_MODEL'));
  if (defaultModel && !specProblem) {
    try {
      registry.resolve(undefined, undefined, undefined, {});
      const from = env.HATCHERY_MODEL ? 'HATCHERY_MODEL' : 'the key set';
      checks.push(ok('default model', `drones that name no model use ${defaultModel} (from ${from})`));
    } catch (err) {
      const fix =
        err instanceof HatcheryError && err.code === 'MISSING_API_KEY'
          ? `set ${String(err.context.variable)}, or change HATCHERY_MODEL to a model of the key you have`
          : 'fix HATCHERY_MODEL';
      checks.push(problem('default model', (err as Error).message, fix));
    }
  }
  for (const { baseUrlVar: v } of VENDORS) {
    const value = env[v];
    if (!value) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      checks.push(
        problem(v, 'is not a URL', `set ${v} to a URL such as http://localhost:11434/v1, or unset it`),
      );
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      checks.push(problem(v, `uses ${url.protocol}, not http: or https:`, `set ${v} to an http(s) URL`));
      continue;
    }
    // Only origin and path: a URL may carry a password or a token in its query.
    checks.push(ok(v, `model calls of that vendor go to ${url.origin}${url.pathname}`));
  }
  return checks;
}

/** An MCP server entry to check, and where it was found. */
interface ServerUse {
  name: string;
  def: McpServerDef;
  /** The file that defines it. */
  source: string;
}

/** An a2aAgents entry to check, and the file that defines it. */
interface AgentUse {
  name: string;
  def: A2aAgentDef;
  source: string;
}

/** The folder check: how many hatcheries load, and each file that does not; collects their servers and agents. */
async function folderChecks(dir: string, servers: ServerUse[], agents: AgentUse[]): Promise<Check[]> {
  const name = `folder ${dir}`;
  const initFix = `create one with: hatchery-mcp init ${shellQuote(dir)} (or give another folder with --dir)`;
  try {
    if (!(await stat(dir)).isDirectory()) return [problem(name, 'is not a folder', initFix)];
  } catch {
    return [problem(name, 'does not exist', initFix)];
  }
  const checks: Check[] = [];
  const loaded: string[] = [];
  for (const file of await listHatcheryFileNames(dir)) {
    const report = await checkFile(file, {});
    if (report.hatchery) {
      loaded.push(report.hatchery.name);
      for (const [server, def] of Object.entries(report.hatchery.def.mcpServers ?? {}))
        servers.push({ name: server, def: anchored(def, report.hatchery.dir), source: file });
      for (const [agent, def] of Object.entries(report.hatchery.def.a2aAgents ?? {}))
        agents.push({ name: agent, def, source: file });
      continue;
    }
    if (report.unreadable) {
      const fix = report.unreadable.startsWith('cannot read')
        ? 'check its permissions'
        : `run: hatchery-mcp validate ${shellQuote(file)}`;
      checks.push(problem(file, report.unreadable, fix));
      continue;
    }
    if (report.notHatchery) continue;
    const [first, ...more] = report.problems;
    const where = first?.path ? `${first.path}${first.line ? ` (line ${first.line})` : ''}: ` : '';
    const rest = more.length > 0 ? ` (and ${more.length} more problem${more.length === 1 ? '' : 's'})` : '';
    checks.push(
      problem(
        file,
        `does not load: ${where}${first?.message ?? 'invalid'}${rest}`,
        `fix it; hatchery-mcp validate ${shellQuote(file)} lists every problem`,
      ),
    );
  }
  const invalid = checks.length;
  const names = loaded.slice(0, 10).join(', ') + (loaded.length > 10 ? ', ...' : '');
  let summary = loaded.length === 1 ? '1 hatchery loads' : `${loaded.length} hatcheries load`;
  if (names) summary += ` (${names})`;
  if (invalid) summary += invalid === 1 ? ', 1 file does not' : `, ${invalid} files do not`;
  if (loaded.length > 0) checks.unshift(ok(name, summary));
  else if (invalid > 0) checks.unshift(warn(name, `serves no tool: ${summary}`, 'fix the files below'));
  else checks.unshift(warn(name, 'holds no hatchery files (*.json, *.yaml, *.yml)', initFix));
  return checks;
}

/** Looks up a stdio server's command, then starts it (or connects to its URL) and lists its tools. */
async function serverChecks(uses: ServerUse[], timeoutMs: number): Promise<Check[]> {
  if (uses.length === 0) return [];
  const { McpPool } = await import('../tools/mcp-client.js');
  const pool = new McpPool({ connectTimeoutMs: timeoutMs });
  try {
    return await Promise.all(
      uses.map(async (u, i): Promise<Check> => {
        const name = `mcpServers "${u.name}" (${u.source})`;
        let note = '';
        if (!('url' in u.def)) {
          const cwd = u.def.cwd ?? process.cwd();
          const found = await findCommand(u.def.command, cwd);
          if (!found) {
            return problem(
              name,
              `command "${u.def.command}" is not found${u.def.command.includes('/') || u.def.command.includes('\\') ? ` (from ${cwd})` : ' on PATH'}; desktop clients then fail with "spawn ${u.def.command} ENOENT"`,
              `install it, or write its absolute path as "command" (find it with: ${process.platform === 'win32' ? 'where' : 'command -v'} ${path.basename(u.def.command)})`,
            );
          }
          if (!path.isAbsolute(u.def.command))
            note = `; "${u.def.command}" is ${found} here, but desktop clients start with a shorter PATH: an absolute command is safer`;
        }
        try {
          // Each entry gets its own connection: two files may define different servers of one name.
          const key = uses.findIndex((o) => o.name === u.name) === i ? u.name : `${u.name} (${u.source})`;
          const tools = await pool.tools(key, u.def, AbortSignal.timeout(timeoutMs));
          const names = tools.map((t) => t.name);
          const list = names.slice(0, 10).join(', ') + (names.length > 10 ? ', ...' : '');
          return ok(
            name,
            `started; ${names.length} tool${names.length === 1 ? '' : 's'}${list ? `: ${list}` : ''}${note}`,
          );
        } catch (err) {
          const why =
            (err as Error).name === 'TimeoutError'
              ? `no tool list within ${timeoutMs / 1000} s`
              : formatError(err);
          return problem(name, why, `fix the entry (command, args, env, cwd or url) in ${u.source}`);
        }
      }),
    );
  } finally {
    await pool.close();
  }
}

/** Fetches the card of each A2A agent, through the network guard as a run would, and lists its skills. */
async function agentChecks(uses: AgentUse[], network: NetworkOptions, timeoutMs: number): Promise<Check[]> {
  if (uses.length === 0) return [];
  const { A2aAgents } = await import('../tools/a2a/agents.js');
  const agents = new A2aAgents(network);
  return Promise.all(
    uses.map(async (u): Promise<Check> => {
      const name = `a2aAgents "${u.name}" (${u.source})`;
      try {
        const signal = AbortSignal.timeout(timeoutMs);
        const { card } = await raceSignal(agents.connect(u.def, `A2A agent "${u.name}"`), signal);
        const ids = card.skills.map((s) => s.id);
        const list = ids.slice(0, 10).join(', ') + (ids.length > 10 ? ', ...' : '');
        const streams = card.capabilities?.streaming ? 'streams' : 'is polled';
        return ok(
          name,
          `card of "${card.name}" fetched; ${ids.length} skill${ids.length === 1 ? '' : 's'}${list ? `: ${list}` : ''}; ${streams}`,
        );
      } catch (err) {
        const why =
          (err as Error).name === 'TimeoutError'
            ? `no agent card within ${timeoutMs / 1000} s`
            : formatError(err);
        return problem(name, why, `start the agent, or fix the entry (url, headers) in ${u.source}`);
      }
    }),
  );
}

/** `hatchery-mcp doctor`: returns the exit code. */
export async function doctorCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'doctor', DOCTOR_HELP, {
    dir: { type: 'string', short: 'd' },
    'mcp-config': { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    'allow-host': { type: 'string', multiple: true },
    'allow-private-network': { type: 'boolean' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  noArguments(positionals);
  const timeoutMs = (intOption(values.timeout, 'timeout') ?? 20) * 1000;
  const config = values['mcp-config'];
  const network = await networkOptions(values);
  const servers: ServerUse[] = [];
  const agents: AgentUse[] = [];
  const checks = [
    nodeCheck(),
    ...modelChecks(process.env),
    ...(await folderChecks(values.dir ?? 'hatchery', servers, agents)),
  ];
  if (config) {
    try {
      // readMcpConfig has anchored each stdio server to the config file's folder already.
      for (const [name, def] of Object.entries(await readMcpConfig(config)))
        servers.push({ name, def, source: config });
    } catch (err) {
      checks.push(problem(`--mcp-config ${config}`, (err as Error).message, 'fix the file'));
    }
  }
  checks.push(
    ...(await serverChecks(servers, timeoutMs)),
    ...(await agentChecks(agents, network, timeoutMs)),
  );
  // Server errors may echo their environment: printOut redacts every secret value of ours from them.
  const problems = checks.filter((c) => c.status === 'problem').length;
  const warnings = checks.filter((c) => c.status === 'warning').length;
  if (values.json) {
    printOut(`${printableJson({ ok: problems === 0, problems, warnings, checks }, 2)}\n`);
  } else {
    const lines = checks.map(
      (c) => `${c.status.padEnd(8)} ${c.name}: ${c.message}${c.fix ? `\n         fix: ${c.fix}` : ''}`,
    );
    lines.push(
      problems === 0
        ? `all good${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}`
        : `${problems} problem${problems === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`,
    );
    printOut(`${lines.join('\n')}\n`);
  }
  return problems === 0 ? EXIT.OK : EXIT.RUN_FAILED;
}
