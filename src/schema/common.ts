import { z } from 'zod';
import { END, IDENTIFIER, NODE_NAME } from './names.js';

/** A string field rendered as a Nunjucks template at run time. */
export const template = (description: string) => z.string().describe(`${description} (Nunjucks template)`);

/** A node name as written in `next`, `start` and similar references. */
export const nodeRef = z.string().min(1).describe('Name of a node in this hatchery');

/** `next`: one node name, or a list routed by the first name found in the output (the last is the default). */
const nextField = z
  .union([nodeRef, z.array(nodeRef).min(1)])
  .describe(
    'Where to go after this node: a node name, or a list (the first listed name that occurs in the output as a whole word wins; otherwise the last entry). END ends the run.',
  );

/** Fields every node kind accepts. */
export const nodeBase = {
  name: z
    .string()
    .regex(NODE_NAME, 'must start with a letter or _ and contain only letters, digits, _, - and .')
    .refine((n) => n !== END, { message: 'END is reserved for ending a run; pick another name' })
    .optional()
    .describe('Unique node name; generated (node_1, node_2, ...) when absent'),
  desc: z
    .string()
    .optional()
    .describe(
      'What this node does; shown to a supervisor drone (route: "choose") choosing among its next nodes',
    ),
  next: nextField.optional(),
  save_output: z
    .string()
    .regex(IDENTIFIER, 'must be an identifier (letters, digits, _)')
    .optional()
    .describe('ctx variable that receives this node output text, e.g. "draft" makes {{ ctx.draft }}'),
  write_output: template(
    'File the output is appended to (with a newline); relative to the hatchery file',
  ).optional(),
  max_visits: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('How many times a run may execute this node; exceeding it goes to on_limit or fails'),
  on_limit: nodeRef.optional().describe('Node to go to when max_visits is exceeded (default: fail the run)'),
};

/** A positive timeout in milliseconds. */
export const timeoutMs = z.number().int().min(1).describe('Timeout in milliseconds');
