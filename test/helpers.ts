import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ValidationError } from '../src/core/errors.js';
import type { Hatchery } from '../src/engine/contracts.js';
import { loadHatcheryObject } from '../src/loader/load.js';

/** A fresh temporary folder (real path, so symlink checks compare like with like). */
export function tempDir(prefix = 'hatchery-test-'): string {
  return realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
}

/** Writes a hatchery definition (object → JSON) or raw text to `dir/file`, creating folders; returns the path. */
export function writeHatchery(dir: string, file: string, def: unknown): string {
  const p = path.join(dir, file);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, typeof def === 'string' ? def : JSON.stringify(def, null, 2));
  return p;
}

/** Loads a definition as if it were the file `<dir>/<name>`; throws the ValidationError when invalid. */
export function load(def: unknown, dir = tempDir(), name = 'test.json'): Hatchery {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(def, null, 2));
  const res = loadHatcheryObject(def, file);
  if (!res.ok) throw res.error;
  return res.hatchery;
}

/** The problems of an invalid definition, as `path: message` lines. */
export function problems(def: unknown): string[] {
  const res = loadHatcheryObject(def, '/tmp/x.json');
  if (res.ok) return [];
  return (res.error as ValidationError).problems.map(
    (p) => `${p.path}: ${p.severity === 'warning' ? 'warning: ' : ''}${p.message}`,
  );
}

/** A tool node that outputs `text` (a template) through the echo tool; `extra` adds fields (name, next...). */
export const echoNode = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool',
  tool_name: 'echo',
  tool_args: { text },
  ...extra,
});

/** An {@link echoNode} named `name`. */
export const echo = (name: string, text: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...echoNode(text, extra),
});

/** A minimal valid hatchery with the given nodes. */
export function hatch(nodes: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'test', desc: 'a test hatchery', nodes, ...extra };
}

/** The built CLI (npm test builds it first; so does test/global-setup.ts when it is missing or stale). */
export const CLI_PATH = new URL('../dist/cli.js', import.meta.url).pathname;
/** The repository root. */
export const REPO_ROOT = new URL('..', import.meta.url).pathname;

/** A running CLI process: the child, what it has written so far, and its exit code once it ends. */
export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

/**
 * The run state folder (HATCHERY_STATE) of every CLI a test starts, unless its `env` names another:
 * journals of test runs go to a temporary folder, never into the repository.
 */
export const TEST_STATE = path.join(tempDir('hatchery-state-'), 'runs');

/**
 * Starts the built CLI as a user would, in a clean environment (PATH and HOME plus `env`: no API keys
 * leak in from the developer's shell); its journals go to TEST_STATE unless `env` sets HATCHERY_STATE.
 */
export function startCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): CliProcess {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HATCHERY_STATE: TEST_STATE,
      ...opts.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // A CLI that exits before reading its stdin (a usage error, --help) closes the pipe: writing to it
  // then fails with EPIPE, which is not the test's failure (the exit code and output are).
  child.stdin.on('error', () => {});
  child.stdout.on('data', (b) => {
    out += b;
  });
  child.stderr.on('data', (b) => {
    err += b;
  });
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, out: () => out, err: () => err, exit };
}

/** How a CLI process ended: its exit code and both streams. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (see {@link startCli}) with `stdin`; resolves with the exit code and both streams. */
export async function runCli(
  args: string[],
  opts: { stdin?: string; env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  const p = startCli(args, opts);
  p.child.stdin.end(opts.stdin ?? '');
  const code = await p.exit;
  return { code, stdout: p.out(), stderr: p.err() };
}

/**
 * The modules `hatchery-mcp <args>` imported whose URL matches `pattern` (test/fixtures/loads logs
 * them); the command must succeed. For the checks that a dependency loads only when it is used.
 */
export async function modulesLoadedBy(
  args: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
): Promise<string[]> {
  const log = path.join(tempDir('hatchery-loads-'), 'loads.txt');
  const register = path.join(REPO_ROOT, 'test', 'fixtures', 'loads', 'register.mjs');
  const r = await runCli(args, {
    env: { ...env, HATCHERY_TEST_LOADS: log, NODE_OPTIONS: `--import ${register}` },
  });
  if (r.code !== 0) throw new Error(`hatchery-mcp ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => pattern.test(l));
}

/** What one CLI call of a {@link CliFolder} adds: stdin, and variables on top of the folder's environment. */
export interface CliCall {
  stdin?: string;
  env?: Record<string, string>;
}

/** A temporary folder to write hatcheries in and run the built CLI from: see {@link cliFolder}. */
export interface CliFolder {
  /** The folder (real path). */
  readonly dir: string;
  /** {@link writeHatchery} into the folder. */
  write(name: string, def: unknown): string;
  /** `hatchery-mcp ...args` run in the folder (see {@link runCli}). */
  cli(args: string[], call?: CliCall): Promise<CliResult>;
  /** `hatchery-mcp run FILE`, then the folder's `runArgs`, then `args`. */
  run(file: string, args?: string[], call?: CliCall): Promise<CliResult>;
  /** `hatchery-mcp ...args` started in the folder, to watch or signal it (see {@link startCli}). */
  start(args: string[], call?: Omit<CliCall, 'stdin'>): CliProcess;
}

/**
 * A fresh temporary folder for a CLI test: hatcheries are written into it and the built CLI runs there,
 * with `env()` (read at each call, so it may name a fake server started later) plus the call's variables.
 * `runArgs` follow the file of every `run` (e.g. `['--input', 'go', '--no-journal']`).
 */
export function cliFolder(
  opts: { prefix?: string; env?: () => Record<string, string>; runArgs?: string[] } = {},
): CliFolder {
  const dir = tempDir(opts.prefix);
  const envOf = (call: CliCall = {}) => ({ ...opts.env?.(), ...call.env });
  const cli = (args: string[], call: CliCall = {}) =>
    runCli(args, { cwd: dir, env: envOf(call), ...(call.stdin === undefined ? {} : { stdin: call.stdin }) });
  return {
    dir,
    write: (name, def) => writeHatchery(dir, name, def),
    cli,
    run: (file, args = [], call) => cli(['run', file, ...(opts.runArgs ?? []), ...args], call),
    start: (args, call) => startCli(args, { cwd: dir, env: envOf(call) }),
  };
}

/** A small seeded random generator (mulberry32): property tests that fail can be replayed from their seed. */
export function seededRandom(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
