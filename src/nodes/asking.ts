import type { z } from 'zod';
import { HatcheryError, withContext } from '../core/errors.js';
import { redactText, secretValues } from '../core/secrets.js';
import type { AskRequest, RunContext } from '../engine/contracts.js';
import { issuesText } from '../schema/issues.js';

/** The longest answer accepted, in characters: a person types less; anything longer is refused. */
export const MAX_ANSWER_CHARS = 65_536;

/** An answer that passed its checks: the text a node outputs and, for a schema, the parsed value. */
export interface Answer {
  text: string;
  value?: unknown;
}

/** Checks an answer against a question's choices or schema; `validator` is the schema compiled. */
export type AnswerCheck = (answer: string) => Answer | { error: string };

/** The hint every suspended question gives: where to answer it. */
const HOW_TO_ANSWER =
  'answer it with `hatchery-mcp runs resume <run id> --answer TEXT` (CLI) or the hatchery_respond tool with the run id and your answer (MCP)';

/** A check of answers: one of `choices` (ignoring case, normalised to the choice), or JSON matching `validator`. */
export function answerCheck(
  choices: readonly string[] | undefined,
  validator: z.ZodType | undefined,
): AnswerCheck {
  return (raw) => {
    if (raw.length > MAX_ANSWER_CHARS) {
      return {
        error: `the answer is ${raw.length} characters long; at most ${MAX_ANSWER_CHARS} are accepted`,
      };
    }
    const answer = raw.trim();
    if (choices) {
      const lower = answer.toLowerCase();
      const hit = choices.find((c) => c.toLowerCase() === lower);
      if (hit !== undefined) return { text: hit };
      return {
        error: `"${answer.length > 80 ? `${answer.slice(0, 80)}...` : answer}" is not one of the choices ${choices.map((c) => `"${c}"`).join(', ')}`,
      };
    }
    if (validator) {
      let value: unknown;
      try {
        value = JSON.parse(answer);
      } catch (err) {
        return { error: `the answer is not JSON (${(err as Error).message})` };
      }
      const res = validator.safeParse(value);
      if (!res.success)
        return {
          error: `the answer does not match the schema: ${issuesText(res.error.issues, value, validator)}`,
        };
      return { text: JSON.stringify(res.data), value: res.data };
    }
    return { text: raw };
  };
}

/**
 * Puts a question to the run's person and checks the answer. Without an asker the run suspends:
 * INPUT_REQUIRED carrying the question. An answer that fails `check` is asked again once, with the
 * reason; a second bad answer (or an asker that fails asking again) fails the run with INVALID_ANSWER,
 * and an asker that cannot ask again now suspends the run at the question again.
 */
export async function askPerson(scope: RunContext, request: AskRequest, check: AnswerCheck): Promise<Answer> {
  const ask = scope.shared.ask;
  if (!ask) {
    const what = request.kind === 'approve' ? 'waits for approval' : 'asks';
    throw new HatcheryError('INPUT_REQUIRED', `${what}: ${request.question}; ${HOW_TO_ANSWER}`, {
      node: request.node,
      question: request,
    });
  }
  // An asker that cannot answer now (a terminal whose input ended, a resume given one answer) leaves
  // the run suspended at the question it was asked, saying why when it is asked again.
  const put = (question: AskRequest): Promise<string> =>
    ask(question, scope.signal).catch((err: unknown) => {
      if (err instanceof HatcheryError && err.code === 'INPUT_REQUIRED')
        throw withContext(err, { node: question.node, question });
      throw err;
    });
  const first = check(await put(request));
  if (!('error' in first)) return first;
  let again: string;
  try {
    again = await put({ ...request, question: `${first.error}. ${request.question}` });
  } catch (err) {
    if (scope.signal.aborted || (err instanceof HatcheryError && err.code === 'INPUT_REQUIRED')) throw err;
    throw invalid(request, first.error, err);
  }
  const second = check(again);
  if ('error' in second) throw invalid(request, second.error);
  return second;
}

function invalid(request: AskRequest, why: string, cause?: unknown): HatcheryError {
  const allowed = request.choices
    ? `answer one of ${request.choices.map((c) => `"${c}"`).join(', ')}`
    : request.schema
      ? 'answer JSON matching the schema'
      : 'answer again';
  return new HatcheryError(
    'INVALID_ANSWER',
    `${why}; ${allowed}`,
    { node: request.node },
    cause === undefined ? undefined : { cause },
  );
}

const YES_NO = ['yes', 'no'] as const;
const yesNo = answerCheck(YES_NO, undefined);

/**
 * Asks approval before a side effect (approve: true). `what` says what will run with its rendered
 * arguments; secrets in it are redacted before anyone sees it. "no" fails with APPROVAL_DENIED.
 */
export async function approve(scope: RunContext, node: string, what: string): Promise<void> {
  const question = redactText(`${what}. Run it?`, secretValues(process.env), { authHeaders: true });
  const answer = await askPerson(scope, { kind: 'approve', node, question, choices: YES_NO }, yesNo);
  if (answer.text !== 'yes') {
    throw new HatcheryError('APPROVAL_DENIED', `not approved (${question.slice(0, 300)}); nothing ran`, {
      node,
    });
  }
}
