import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import {
  DEFAULT_SCRIPT_TIMEOUT_MS,
  programFailure,
  runProgram,
  SCRIPT_OUTPUT_LIMIT,
} from '../core/process/program.js';
import type { NodeKindImpl, RunContext } from '../engine/contracts.js';
import type { Template } from '../engine/templates/templates.js';
import type { ScriptDef } from '../schema/script.js';
import { cwdProblem } from '../tools/mcp-entry.js';
import { approve } from './asking.js';

/**
 * The default stdin: the output of the node that ran last, or, when no node of the run has produced
 * output yet (the script starts the run), the run's input, as a UNIX filter at the head of a pipe reads it.
 */
function previousOutput(scope: RunContext): string {
  if (scope.last !== '') return scope.last;
  for (const _ in scope.out) return '';
  const input = scope.ctx.input;
  return input === undefined || input === null ? '' : String(input);
}

/** Script: pipes text through a program (argv array, each element a template). */
export const scriptImpl: NodeKindImpl<ScriptDef> = {
  compile(def, base, cc) {
    const cmd = def.cmd.map((c, i) => cc.template(c, `cmd/${i}`));
    const stdin = def.stdin === undefined ? undefined : cc.template(def.stdin, 'stdin');
    const timeoutMs = def.timeout_ms ?? DEFAULT_SCRIPT_TIMEOUT_MS;
    // Only what the file names reaches the program besides the allow-list (core/process/child-env.ts).
    const env = def.env;
    // A constant folder, so a missing one is a load problem, before any model is paid.
    const ownDir = def.cwd === undefined ? undefined : path.resolve(cc.dir, def.cwd);
    const missing = ownDir === undefined ? undefined : cwdProblem(ownDir);
    if (missing)
      cc.problem(
        'cwd',
        `the script cannot run in "${def.cwd}": ${missing}; create it or fix "cwd" (relative to ${cc.dir})`,
      );
    return {
      ...base,
      exec: async (scope) => {
        const argv = cmd.map((t) => scope.render(t as Template));
        const input = stdin ? scope.render(stdin) : previousOutput(scope);
        const dir = scope.hatchery.dir;
        // A program given by a relative path (./x.sh, tools/x.py) lives beside the hatchery file,
        // whatever folder it runs in; bare names are looked up on PATH.
        const prog = argv[0] ?? '';
        if (/[\\/]/.test(prog) && !path.isAbsolute(prog)) argv[0] = path.resolve(dir, prog);
        const cwd = ownDir ?? scope.guard.startDir(dir);
        if (def.approve) await approve(scope, base.name, `run ${JSON.stringify(argv)} in ${cwd}`);
        const res = await runProgram(argv, {
          stdin: input,
          cwd,
          timeoutMs,
          signal: scope.signal,
          env,
        });
        if (scope.signal.aborted)
          throw new HatcheryError('ABORTED', 'the run was cancelled', { field: 'cmd' });
        if (res.stopped === 'timeout') {
          throw new HatcheryError('TIMEOUT', `"${argv[0]}" was killed after timeout_ms (${timeoutMs} ms)`, {
            field: 'timeout_ms',
          });
        }
        if (res.stopped === 'output') {
          throw new HatcheryError(
            'SCRIPT',
            `${programFailure(argv[0]!, res)}; have it write less, or write to a file and read that`,
            { field: 'cmd', limit: SCRIPT_OUTPUT_LIMIT },
          );
        }
        const failure = programFailure(argv[0]!, res);
        if (failure) {
          // The last 800 characters of stderr, trimmed.
          const stderr = res.stderr.trim();
          const err = stderr.length <= 800 ? stderr : `...${stderr.slice(-800)}`;
          // The folder it ran in: relative paths in its arguments and its errors are read from there.
          throw new HatcheryError('SCRIPT', `${failure} (it ran in ${cwd})${err ? `; stderr: ${err}` : ''}`, {
            field: 'cmd',
            exitCode: res.code,
            cwd,
          });
        }
        return { text: res.stdout };
      },
    };
  },
};
