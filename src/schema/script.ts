import { z } from 'zod';
import { approveField } from './ask.js';
import { nodeBase, template, timeoutMs } from './common.js';
import { nodeKind } from './kind.js';
import { ENV_NAME } from './names.js';
import { fileObject, lazily } from './object.js';

/**
 * `env` of a script node or stdio MCP server: variables the program gets besides the allow-listed
 * parent ones (PATH, HOME, LANG...). Values are literal; `${NAME}` in a value is the parent's NAME.
 */
export const childEnvField = z
  .record(z.string().regex(ENV_NAME, 'must be a variable name (no "=")'), z.string())
  .describe(
    `Environment variables of the program besides PATH, HOME, LANG and the like (no other variable of this process reaches it); "\${NAME}" in a value is this process's NAME, e.g. {"GITHUB_TOKEN": "\${GITHUB_TOKEN}"}`,
  );

/** A script node: pipes text through a program (the UNIX-filter node). */
export const scriptSchema = lazily(() =>
  fileObject({
    ...nodeBase,
    type: z.literal('script').describe('"script": run a program, stdin in, stdout out'),
    cmd: z
      .array(template('One argv element'))
      .min(1)
      .describe('The program and its arguments as an argv array; never run through a shell'),
    stdin: template("Text fed to the program's stdin; default the previous node's output").optional(),
    env: childEnvField.optional(),
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Folder the program runs in, relative to this file. Default: the folder the command was started in, or this file's folder when that is / or the home folder (a desktop client)",
      ),
    timeout_ms: timeoutMs
      .optional()
      .describe('Kill the program and every process it started after this many milliseconds (default 60000)'),
    approve: approveField.optional(),
  }),
);

/** A script node as written in a file. */
export type ScriptDef = z.infer<ReturnType<typeof scriptSchema>>;

/** The script kind: runs a program (open world, may write); starting a run without `stdin`, it reads the input. */
export const scriptKind = nodeKind({
  types: ['script'],
  schema: scriptSchema,
  hints: { openWorld: true, readOnly: false },
  readsInput: (def) => def.stdin === undefined,
});
