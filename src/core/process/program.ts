import type { ChildProcess } from 'node:child_process';
import { HatcheryError } from '../errors.js';
import { childEnv } from './child-env.js';
import { endTree, KILL_GRACE_MS, spawnTree } from './process-tree.js';

/** Default time a script (or shell_exec call) may run, in milliseconds. */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 60_000;
/** Largest stdout, in bytes, a program may write before it is stopped. */
export const SCRIPT_OUTPUT_LIMIT = 10_000_000;
/** Chunks of stderr kept: only its end is ever shown. */
const STDERR_CHUNKS = 64;
/** After the program is gone, how long a process that left its group may keep our pipes open. */
const PIPE_LINGER_MS = 500;

/** Why a program was stopped before it ended by itself. */
export type StopReason = 'timeout' | 'cancel' | 'output';

/** Result of running a program to completion (or until it was stopped). */
export interface ProgramResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Set when the program (and its process tree) was stopped: timeout, cancellation or output limit. */
  stopped?: StopReason;
}

/** Options of runProgram. */
export interface ProgramOptions {
  stdin: string;
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** The file's `env` for this program (see childEnv); the allow-listed parent variables come first. */
  env?: Readonly<Record<string, string>>;
  /** Largest stdout in bytes (default SCRIPT_OUTPUT_LIMIT). */
  outputLimit?: number;
}

/**
 * Runs argv (never through a shell) in its own process group with the child environment, feeds
 * `stdin`, collects output. On timeout, cancellation or too much output the whole tree is stopped
 * (SIGTERM, SIGKILL after KILL_GRACE_MS) and the promise settles within about that grace, even when
 * a grandchild holds the output pipe.
 */
export function runProgram(argv: readonly string[], opts: ProgramOptions): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = argv;
    if (!file) {
      reject(new HatcheryError('SCRIPT', 'cmd[0] rendered to an empty program name', { field: 'cmd/0' }));
      return;
    }
    if (opts.signal.aborted) {
      resolve({ code: null, signal: null, stdout: '', stderr: '', stopped: 'cancel' });
      return;
    }
    const limit = opts.outputLimit ?? SCRIPT_OUTPUT_LIMIT;
    const child: ChildProcess = spawnTree(file, args, {
      cwd: opts.cwd,
      env: childEnv(opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let stopped: StopReason | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let deadline: NodeJS.Timeout | undefined;

    /** Marks the promise settled and drops the timers and the listener; false when it already was. */
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      opts.signal.removeEventListener('abort', onAbort);
      return true;
    };
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (!settle()) return;
      // Streams a stray process still holds must not keep this process alive.
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ...(stopped ? { stopped } : {}),
      });
    };
    /** Settles after `ms` even if the pipes never close (a process that left the group holds them). */
    const settleWithin = (ms: number) => {
      if (deadline || settled) return;
      deadline = setTimeout(() => finish(exit?.code ?? null, exit?.signal ?? null), ms);
    };
    const stop = (why: StopReason) => {
      if (stopped || settled) return;
      stopped = why;
      endTree(child);
      settleWithin(KILL_GRACE_MS + PIPE_LINGER_MS);
    };
    const timer = setTimeout(() => stop('timeout'), opts.timeoutMs);
    const onAbort = () => stop('cancel');
    opts.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout?.on('data', (b: Buffer) => {
      if (stopped === 'output') return;
      outBytes += b.length;
      if (outBytes > limit) stop('output');
      else out.push(b);
    });
    child.stderr?.on('data', (b: Buffer) => {
      err.push(b);
      if (err.length > STDERR_CHUNKS) err.splice(0, err.length - STDERR_CHUNKS);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (!settle()) return;
      const why =
        e.code === 'ENOENT' ? `program not found: "${file}" (is it installed and on PATH?)` : e.message;
      reject(new HatcheryError('SCRIPT', why, { field: 'cmd/0' }, { cause: e }));
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // The rest of the group is being ended (spawnTree); its pipes close with it.
      settleWithin(KILL_GRACE_MS + PIPE_LINGER_MS);
    });
    child.on('close', (code, signal) => finish(exit?.code ?? code, exit?.signal ?? signal));
    // A program that exits without reading stdin makes the write fail with EPIPE; that is not an error.
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.stdin);
  });
}

/**
 * Why a program failed, in words, or undefined when it succeeded (exit code 0, not stopped).
 * Timeouts and cancellations are left to the caller, which knows its field and error code.
 */
export function programFailure(
  program: string,
  res: ProgramResult,
  outputLimit = SCRIPT_OUTPUT_LIMIT,
): string | undefined {
  if (res.stopped === 'output') {
    return `"${program}" was stopped: it wrote more than ${outputLimit} bytes to stdout (the output limit)`;
  }
  if (res.code === 0 && !res.stopped) return undefined;
  return res.code === null
    ? `"${program}" was killed by ${res.signal}`
    : `"${program}" exited with code ${res.code}`;
}
