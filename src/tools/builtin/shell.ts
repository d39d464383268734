import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import {
  DEFAULT_SCRIPT_TIMEOUT_MS,
  type ProgramResult,
  programFailure,
  runProgram,
} from '../../core/process/program.js';
import { defineBuiltin } from './define.js';

/** Characters of stderr shown when a program fails. */
const STDERR_TAIL = 2000;

/** shell_exec: runs a program from an argv list (never through a shell); only with --allow-shell. */
export const shellExecTool = defineBuiltin({
  name: 'shell_exec',
  description:
    'Run a program with arguments (argv list, no shell: no pipes, globs or variables) and return its standard output.',
  schema: z.object({
    argv: z.array(z.string()).min(1).describe('Program and arguments, e.g. ["ls", "-l", "src"]'),
    stdin: z.string().optional().describe('Text fed to the standard input'),
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Working folder, relative to the hatchery file; it must be a write root or inside one (default: the working folder of the server)',
      ),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`Kill the program after this many milliseconds (default ${DEFAULT_SCRIPT_TIMEOUT_MS})`),
  }),
  async run({ argv, stdin, cwd, timeout_ms }, tc) {
    // A write root that is not protected: a program must not drop files where hatcheries are loaded from.
    const dir = tc.scope.guard.workDir(tc.scope.hatchery.dir, cwd, { node: tc.node, tool: 'shell_exec' });
    const timeoutMs = timeout_ms ?? DEFAULT_SCRIPT_TIMEOUT_MS;
    let res: ProgramResult;
    try {
      res = await runProgram(argv, { stdin: stdin ?? '', cwd: dir, timeoutMs, signal: tc.signal });
    } catch (err) {
      const msg = err instanceof HatcheryError ? err.message : (err as Error).message;
      throw new HatcheryError('TOOL', `shell_exec: ${msg}`, { tool: 'shell_exec' }, { cause: err });
    }
    if (tc.signal.aborted) throw new HatcheryError('ABORTED', 'shell_exec: the call was cancelled');
    const stderr = res.stderr.trim();
    const errTail = stderr.length > STDERR_TAIL ? `...${stderr.slice(-STDERR_TAIL)}` : stderr;
    if (res.stopped === 'timeout') {
      return { text: `"${argv[0]}" was killed after ${timeoutMs} ms\n${res.stdout}`, isError: true };
    }
    if (res.stopped === 'output') {
      // The output itself is dropped: 10 MB would flood the model's context anyway.
      return { text: `${programFailure(argv[0]!, res)}; ask for less output`, isError: true };
    }
    const failure = programFailure(argv[0]!, res);
    if (failure) {
      return {
        text: `${failure}${errTail ? `\nstderr: ${errTail}` : ''}${res.stdout ? `\nstdout: ${res.stdout}` : ''}`,
        isError: true,
      };
    }
    return res.stdout;
  },
});
