import { HatcheryError } from '../core/errors.js';
import type { CompileContext, NodeKindImpl, NodeResult, RunContext } from '../engine/contracts.js';
import { walk } from '../engine/walk.js';
import type { LoopDef } from '../schema/loop.js';
import { checkStartNode } from './fanout.js';

/** Default iteration limit of a loop node. */
const DEFAULT_MAX_ITERATIONS = 10;

const TAG = /\{\{|\{%/;

/** A compiled `until`: true when the loop is done after an iteration that produced `output`. */
type Until = (scope: RunContext, output: string) => boolean;

function compileUntil(source: string, cc: CompileContext): Until {
  if (TAG.test(source)) {
    const t = cc.template(source, 'until');
    return (scope) => t!.render(scope.vars).trim().toLowerCase() === 'true';
  }
  // The whole-word rule of next lists (compileRouter), so a word means the same in `next` and `until`.
  const word = source.trim().replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  const test = new RegExp(`(?<![A-Za-z0-9_])${word}(?![A-Za-z0-9_])`);
  return (_scope, output) => test.test(output);
}

/**
 * Loop: runs `body` and its next chain in the node's own scope (so save_output carries over between
 * iterations) until `until` holds or `max_iterations` is reached; the output is the body's last output.
 */
export const loopImpl: NodeKindImpl<LoopDef> = {
  compile(def, base, cc) {
    checkStartNode(cc, base.name, def.body, 'body');
    if (def.until.trim() === '') cc.problem('until', 'until is blank; give a word or a template');
    const until = compileUntil(def.until, cc);
    const body = def.body;
    const max = def.max_iterations ?? DEFAULT_MAX_ITERATIONS;
    const onLimit = base.onLimit;
    const describeUntil = TAG.test(def.until)
      ? 'the until template never rendered "true"'
      : `the body output never contained the word "${def.until.trim()}"`;
    return {
      ...base,
      exec: async (scope) => {
        let last: NodeResult = { text: '' };
        // The body walks this scope, but its nodes belong under this loop in a run's tree (events).
        const outer = scope.bodyOf;
        scope.bodyOf = scope.step;
        try {
          for (let i = 1; i <= max; i++) {
            scope.ctx.iteration = i;
            last = await walk(scope, body);
            // The body's usage is already counted by its own nodes, and its own `next` choice is not ours.
            if (until(scope, last.text)) return { text: last.text, value: last.value };
          }
        } finally {
          scope.bodyOf = outer;
        }
        if (onLimit !== undefined) return { text: last.text, value: last.value, next: onLimit };
        throw new HatcheryError(
          'MAX_ITERATIONS',
          `loop "${base.name}" reached max_iterations (${max}): ${describeUntil}; raise max_iterations, change until, or add "on_limit": "<node>" to go on with the last output`,
          { field: 'max_iterations', limit: max },
        );
      },
    };
  },
};
