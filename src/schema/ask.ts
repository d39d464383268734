import { z } from 'zod';
import { nodeBase, template } from './common.js';
import { nodeKind } from './kind.js';
import { fileObject, lazily } from './object.js';

/** An ask node: puts a question to a person and outputs the answer. */
export const askSchema = lazily(() =>
  fileObject({
    ...nodeBase,
    type: z.literal('ask').describe('"ask": put a question to a person and output the answer'),
    question: template(
      'The question; on a terminal the CLI prompts, over MCP the client is asked (elicitation), otherwise the run waits for an answer (status input_required)',
    ),
    choices: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('The allowed answers (matched ignoring case); any other answer is refused'),
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'A JSON Schema the answer must satisfy: the answer is then JSON, and templates see its value as out.<node>',
      ),
  }),
);

/** An ask node as written in a file. */
export type AskDef = z.infer<ReturnType<typeof askSchema>>;

/** `approve` of baneling and script nodes: ask a person before the side effect runs. */
export const approveField = z
  .boolean()
  .describe(
    'Ask a person before running, showing what will run with its rendered arguments; "no" fails the run with APPROVAL_DENIED and nothing runs',
  );

/** The ask kind: a leaf that waits for a person's answer. */
// A question waits for a person, not for a side effect: never a step the engine answers again.
export const askKind = nodeKind({ types: ['ask'], schema: askSchema, wholeStep: false });
