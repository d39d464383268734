import { spawn } from 'node:child_process';
import path from 'node:path';
import { HatcheryError } from '../errors.js';
import type { Scope } from '../runtime/scope.js';
import type { Template } from '../runtime/templates.js';
import type { CompiledNode, NodeResult } from '../runtime/types.js';
import type { ScriptDef } from '../schema/script.js';
import type { CompileContext, NodeBase, NodeKindImpl } from './kind.js';

/** Default time a script may run, in milliseconds. */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 60_000;
/** Largest stdout a script may produce before it is stopped. */
export const SCRIPT_OUTPUT_LIMIT = 10_000_000;

/** Environment variables that never reach child programs: secrets of this process. */
const SECRET_ENV = /^(OPENAI_API_KEY|ANTHROPIC_API_KEY|HATCHERY_MCP_TOKEN)$/;

/** The parent environment without API keys and tokens. */
export function childEnv(env: Readonly<Record<string, string | undefined>> = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !SECRET_ENV.test(k)) out[k] = v;
  return out;
}

/** Result of running a program to completion. */
export interface ProgramResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs argv (never through a shell), feeds `stdin`, collects output. Stops the program on timeout or
 * abort: SIGTERM first, SIGKILL two seconds later.
 */
export function runProgram(
  argv: readonly string[],
  opts: { stdin: string; cwd: string; timeoutMs: number; signal: AbortSignal },
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = argv;
    if (!file) {
      reject(new HatcheryError('SCRIPT', 'cmd[0] rendered to an empty program name', { field: 'cmd/0' }));
      return;
    }
    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: childEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), 2000);
      killTimer.unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, opts.timeoutMs);
    const onAbort = () => stop();
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const cleanup = () => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      opts.signal.removeEventListener('abort', onAbort);
    };
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > SCRIPT_OUTPUT_LIMIT) stop();
      else out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      err.push(b);
      // Only the end of stderr is ever shown; keep memory bounded for chatty programs.
      if (err.length > 64) err.splice(0, err.length - 64);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      cleanup();
      const why =
        e.code === 'ENOENT' ? `program not found: "${file}" (is it installed and on PATH?)` : e.message;
      reject(new HatcheryError('SCRIPT', why, { field: 'cmd/0' }, { cause: e }));
    });
    child.on('close', (code, signal) => {
      cleanup();
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
      });
    });
    // A program that exits without reading stdin makes the write fail with EPIPE; that is not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.stdin);
  });
}

/** The last `n` characters of stderr, trimmed, for error messages. */
function tail(text: string, n = 800): string {
  const t = text.trim();
  return t.length <= n ? t : `...${t.slice(-n)}`;
}

/** Script: pipes text through a program (argv array, each element a template). */
export const scriptImpl: NodeKindImpl<ScriptDef> = {
  compile(def: ScriptDef, base: NodeBase, cc: CompileContext): CompiledNode {
    const cmd = def.cmd.map((c, i) => cc.template(c, `cmd/${i}`));
    const stdin = def.stdin === undefined ? undefined : cc.template(def.stdin, 'stdin');
    const timeoutMs = def.timeout_ms ?? DEFAULT_SCRIPT_TIMEOUT_MS;
    return {
      ...base,
      exec: async (scope: Scope): Promise<NodeResult> => {
        const argv = cmd.map((t) => scope.render(t as Template));
        const input = stdin ? scope.render(stdin) : scope.last;
        const dir = scope.hatchery.dir;
        // A program given by a relative path (./x.sh, tools/x.py) lives beside the hatchery file,
        // whatever folder it runs in; bare names are looked up on PATH.
        const prog = argv[0] ?? '';
        if (/[\\/]/.test(prog) && !path.isAbsolute(prog)) argv[0] = path.resolve(dir, prog);
        const res = await runProgram(argv, {
          stdin: input,
          cwd: scope.guard.workDir(dir, undefined),
          timeoutMs,
          signal: scope.signal,
        });
        if (scope.signal.aborted)
          throw new HatcheryError('ABORTED', 'the run was cancelled', { field: 'cmd' });
        if (res.timedOut) {
          throw new HatcheryError('TIMEOUT', `"${argv[0]}" was killed after timeout_ms (${timeoutMs} ms)`, {
            field: 'timeout_ms',
          });
        }
        if (res.code !== 0) {
          const how = res.code === null ? `was killed by ${res.signal}` : `exited with code ${res.code}`;
          const err = tail(res.stderr);
          throw new HatcheryError('SCRIPT', `"${argv[0]}" ${how}${err ? `; stderr: ${err}` : ''}`, {
            field: 'cmd',
            exitCode: res.code,
          });
        }
        return { text: res.stdout };
      },
    };
  },
};
