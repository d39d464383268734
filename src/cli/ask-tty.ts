import { createInterface } from 'node:readline/promises';
import { HatcheryError } from '../core/errors.js';
import type { AskFn, AskRequest } from '../engine/contracts.js';
import { runsCommandLine } from '../journal/state-dir.js';
import { EXIT } from './args.js';
import { printable, printableJson, printErr, printOut } from './print.js';

/** The prompt of one question: the question, numbered choices or the schema, and where to type. */
export function questionText(q: AskRequest): string {
  const head =
    q.kind === 'approve'
      ? `approve? node "${printable(q.node)}" wants to ${printable(q.question)}`
      : `? ${printable(q.question)}`;
  const lines = [head];
  if (q.choices) lines.push(...q.choices.map((c, i) => `  ${i + 1}) ${printable(c)}`));
  else if (q.schema)
    lines.push(`  (answer JSON matching ${printable(JSON.stringify(q.schema)).slice(0, 400)})`);
  return `${lines.join('\n')}\n> `;
}

/** A numbered answer ("2") stands for that choice; anything else is passed on as typed. */
export function pickChoice(answer: string, choices: readonly string[] | undefined): string {
  const t = answer.trim();
  if (!choices || !/^\d{1,4}$/.test(t)) return answer;
  const n = Number(t);
  return n >= 1 && n <= choices.length && !choices.includes(t) ? choices[n - 1]! : answer;
}

/**
 * An AskFn for a terminal: the prompt goes to `output` (stderr: stdout stays the run's output), the
 * answer is one line of `input`. Ctrl-C at the prompt interrupts the process as it does elsewhere
 * (the run is cancelled), and the run's signal cancels the question.
 */
export function ttyAsk(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): AskFn {
  // Parallel branches may ask at once: one question at a time on one terminal.
  let queue: Promise<unknown> = Promise.resolve();
  return (q, signal) => {
    const turn = queue.then(() => askOne(q, signal));
    queue = turn.catch(() => {});
    return turn;
  };

  async function askOne(q: AskRequest, signal: AbortSignal): Promise<string> {
    if (signal.aborted) throw new HatcheryError('ABORTED', 'the run was cancelled', { node: q.node });
    const rl = createInterface({ input, output, terminal: (input as { isTTY?: boolean }).isTTY === true });
    // In raw mode Ctrl-C reaches readline, not the process: pass it on so `run` cancels as usual.
    rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    // End of input (Ctrl-D) closes the interface; a question still open then has no answer coming.
    const closed = new Promise<never>((_, reject) =>
      rl.once('close', () =>
        reject(new HatcheryError('INPUT_REQUIRED', 'no answer: the terminal input ended', { node: q.node })),
      ),
    );
    closed.catch(() => {});
    try {
      const answer = await Promise.race([rl.question(questionText(q), { signal }), closed]);
      return pickChoice(answer, q.choices);
    } catch (err) {
      if (signal.aborted)
        throw new HatcheryError('ABORTED', 'the run was cancelled', { node: q.node }, { cause: err });
      throw err;
    } finally {
      rl.close();
    }
  }
}

/**
 * Reports a run that waits for an answer: the question, and the command that answers it, which finds
 * the run in the state folder `location`; a run with no journal (undefined) cannot be answered later,
 * so it is told how to run it again instead.
 */
export function suspended(err: HatcheryError, json: boolean, location: string | undefined): number {
  const runId = typeof err.context.runId === 'string' ? err.context.runId : '<run id>';
  const q = err.context.question as AskRequest | undefined;
  const question = q?.question ?? err.message;
  if (json) {
    printOut(`${printableJson({ status: 'input_required', runId, question: q ?? { question } })}\n`);
  }
  const lines = [
    `waiting for input: node "${q?.node ?? String(err.context.node ?? '')}" ${q?.kind === 'approve' ? 'waits for approval' : 'asks'}: ${question}`,
  ];
  if (q?.choices) lines.push(`  choices: ${q.choices.join(', ')}`);
  if (q?.schema)
    lines.push(`  the answer is JSON matching ${printable(JSON.stringify(q.schema)).slice(0, 400)}`);
  // printErr cleans the whole text: the question and choices came from a model or a file.
  if (location !== undefined)
    lines.push(`answer it with: ${runsCommandLine(['resume', runId], location, ['--answer', 'TEXT'])}`);
  else
    lines.push(
      'this run keeps no journal (--no-journal), so the answer cannot be given later: run it again without --no-journal (then hatchery-mcp runs resume answers it), or run it on a terminal to answer when it asks',
    );
  printErr(`${lines.join('\n')}\n`);
  return EXIT.INPUT_REQUIRED;
}
