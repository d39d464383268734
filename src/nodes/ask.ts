import { HatcheryError } from '../core/errors.js';
import type { AskRequest, NodeKindImpl } from '../engine/contracts.js';
import type { AskDef } from '../schema/ask.js';
import { answerCheck, askPerson } from './asking.js';
import { jsonSchemaValidator } from './plain-schema.js';

/** Ask: renders a question, puts it to a person (or suspends the run), and outputs the checked answer. */
export const askImpl: NodeKindImpl<AskDef> = {
  compile(def, base, cc) {
    const question = cc.template(def.question, 'question');
    const choices = def.choices;
    if (choices) {
      const seen = new Map<string, number>();
      choices.forEach((c, i) => {
        const k = c.trim().toLowerCase();
        const prev = seen.get(k);
        if (prev !== undefined) {
          cc.problem(
            `choices/${i}`,
            `"${c}" repeats choice ${prev} ("${choices[prev]}"); answers match ignoring case`,
          );
        } else seen.set(k, i);
        if (c.trim() !== c)
          cc.problem(`choices/${i}`, `"${c}" has leading or trailing spaces; answers are trimmed`);
      });
      if (def.schema) cc.problem('schema', 'give either choices or schema, not both');
    }
    let validator: ReturnType<typeof jsonSchemaValidator> | undefined;
    if (def.schema) {
      try {
        validator = jsonSchemaValidator(def.schema);
      } catch (err) {
        cc.problem('schema', `not a usable JSON Schema: ${(err as Error).message}`);
      }
    }
    const check = answerCheck(choices, validator);
    return {
      ...base,
      exec: async (scope) => {
        if (!question)
          throw new HatcheryError('TEMPLATE', 'the question does not compile', { field: 'question' });
        const request: AskRequest = {
          kind: 'ask',
          node: base.name,
          question: scope.render(question),
        };
        if (choices) request.choices = choices;
        if (def.schema) request.schema = def.schema;
        // An answer is its text and, for a schema, its parsed value.
        return askPerson(scope, request, check);
      },
    };
  },
};
