import { z } from 'zod';
import { nodeBase, template, timeoutMs } from './common.js';
import { fileObject } from './object.js';

/** A script node: pipes text through a program (the UNIX-filter node). */
export const scriptSchema = fileObject({
  ...nodeBase,
  type: z.literal('script').describe('"script": run a program, stdin in, stdout out'),
  cmd: z
    .array(template('One argv element'))
    .min(1)
    .describe('The program and its arguments as an argv array; never run through a shell'),
  stdin: template("Text fed to the program's stdin; default the previous node's output").optional(),
  timeout_ms: timeoutMs.optional().describe('Kill the program after this many milliseconds (default 60000)'),
});

/** A script node as written in a file. */
export type ScriptDef = z.infer<typeof scriptSchema>;
