/**
 * The AskFn a resumed run gets with `answer`: the question it was suspended at gets the answer once,
 * later questions go to the caller's AskFn, or suspend the run again with INPUT_REQUIRED.
 */
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import type { AskRequest } from '../../src/engine/contracts.js';
import { answeringAsk } from '../../src/journal/resume.js';

const signal = new AbortController().signal;
const q = (node: string, extra: Partial<AskRequest> = {}): AskRequest => ({
  kind: 'ask',
  node,
  question: `question of ${node}?`,
  ...extra,
});

describe('answeringAsk', () => {
  it('answers the pending node once, then asks the fallback', async () => {
    const asked: string[] = [];
    const ask = answeringAsk({ node: 'Q', kind: 'ask', question: 'q?' }, 'yes', async (r) => {
      asked.push(r.node);
      return 'from the terminal';
    });
    expect(await ask(q('Q'), signal)).toBe('yes');
    expect(await ask(q('Q'), signal)).toBe('from the terminal');
    expect(asked).toEqual(['Q']);
  });

  it('does not give the answer to another node: without a fallback the run suspends there', async () => {
    const ask = answeringAsk({ node: 'Q', kind: 'ask', question: 'q?' }, 'yes', undefined);
    const err = await ask(q('Other', { choices: ['a', 'b'] }), signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HatcheryError);
    expect(err).toMatchObject({
      code: 'INPUT_REQUIRED',
      context: { node: 'Other', question: { node: 'Other', kind: 'ask', choices: ['a', 'b'] } },
    });
    expect(await ask(q('Q'), signal)).toBe('yes');
  });
});
