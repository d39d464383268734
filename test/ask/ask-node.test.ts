import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import type { AskFn, AskRequest } from '../../src/engine/contracts.js';
import { MAX_ANSWER_CHARS } from '../../src/nodes/asking.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatcheryJsonSchema } from '../../src/schema/json-schema.js';
import { echo, hatch, load, problems } from '../helpers.js';

/** An asker that answers from a list, recording every question it was asked. */
function answers(...list: string[]): { ask: AskFn; asked: AskRequest[] } {
  const asked: AskRequest[] = [];
  return {
    asked,
    ask: async (q) => {
      asked.push(q);
      const a = list.shift();
      if (a === undefined) throw new Error('no more answers');
      return a;
    },
  };
}

async function runWith(def: unknown, ask: AskFn | undefined, input = '') {
  const runtime = new Runtime({ env: {} });
  try {
    return await runtime.run(load(def), { input, ask });
  } finally {
    await runtime.close();
  }
}

async function failure(def: unknown, ask: AskFn | undefined, input = ''): Promise<HatcheryError> {
  try {
    await runWith(def, ask, input);
  } catch (err) {
    expect(err).toBeInstanceOf(HatcheryError);
    return err as HatcheryError;
  }
  throw new Error('the run did not fail');
}

const colour = (extra: Record<string, unknown> = {}) =>
  hatch([
    {
      name: 'Pick',
      type: 'ask',
      question: 'Which colour for {{ ctx.input }}?',
      save_output: 'colour',
      next: 'Say',
      ...extra,
    },
    echo('Say', 'chose {{ ctx.colour }}'),
  ]);

describe('ask node', () => {
  it('renders the question, passes it to the asker, and outputs the answer', async () => {
    const a = answers('teal');
    const res = await runWith(colour(), a.ask, 'the boat');
    expect(res.output).toBe('chose teal');
    expect(a.asked).toEqual([{ kind: 'ask', node: 'Pick', question: 'Which colour for the boat?' }]);
  });

  it('without an asker suspends the run with INPUT_REQUIRED, the question and the run id', async () => {
    const err = await failure(colour({ choices: ['red', 'blue'] }), undefined);
    expect(err.code).toBe('INPUT_REQUIRED');
    expect(err.context.question).toEqual({
      kind: 'ask',
      node: 'Pick',
      question: 'Which colour for ?',
      choices: ['red', 'blue'],
    });
    expect(err.context.node).toBe('Pick');
    expect(typeof err.context.runId).toBe('string');
    expect(err.message).toMatch(/asks: Which colour for \?; answer it with .*runs resume .*hatchery_respond/);
  });

  it('normalises an answer to its choice ignoring case', async () => {
    const res = await runWith(colour({ choices: ['Red', 'Blue'] }), answers('  bLUE ').ask);
    expect(res.output).toBe('chose Blue');
  });

  it('asks once more after an answer outside the choices, saying why, then fails on a second bad one', async () => {
    const a = answers('green', 'red');
    const res = await runWith(colour({ choices: ['red', 'blue'] }), a.ask);
    expect(res.output).toBe('chose red');
    expect(a.asked[1]?.question).toMatch(/^"green" is not one of the choices "red", "blue"\. Which colour/);

    const err = await failure(colour({ choices: ['red', 'blue'] }), answers('green', 'mauve').ask);
    expect(err.code).toBe('INVALID_ANSWER');
    expect(String(err)).toMatch(
      /node "Pick": "mauve" is not one of the choices "red", "blue"; answer one of/,
    );
  });

  it('fails with INVALID_ANSWER when the asker cannot ask again (a one-shot answer)', async () => {
    const err = await failure(colour({ choices: ['red', 'blue'] }), answers('green').ask);
    expect(err.code).toBe('INVALID_ANSWER');
    expect(err.message).toMatch(/"green" is not one of the choices/);
  });

  it('parses a schema answer: the output is the JSON, out.<node> the value', async () => {
    const def = hatch([
      {
        name: 'Size',
        type: 'ask',
        question: 'How big?',
        schema: {
          type: 'object',
          properties: { w: { type: 'integer' }, h: { type: 'integer' } },
          required: ['w', 'h'],
        },
        next: 'Area',
      },
      echo('Area', '{{ out.Size.w * out.Size.h }} from {{ out.Size | dump }}'),
    ]);
    const res = await runWith(def, answers('{"w": 3, "h": 4}').ask);
    expect(res.output).toBe('12 from {"w":3,"h":4}');
    const a = answers('{"w": "wide"}', 'not json');
    const err = await failure(def, a.ask);
    expect(a.asked[1]?.question).toMatch(/does not match the schema: .*w/);
    expect(err.code).toBe('INVALID_ANSWER');
    expect(err.message).toMatch(/not JSON/);
  });

  it('refuses an answer larger than the cap with a clear error, whatever its content', async () => {
    const huge = 'x'.repeat(MAX_ANSWER_CHARS + 1);
    const a = answers(huge, huge);
    const err = await failure(colour(), a.ask);
    expect(err.code).toBe('INVALID_ANSWER');
    expect(err.message).toContain(`at most ${MAX_ANSWER_CHARS} are accepted`);
    // The message names the size, it does not echo the answer.
    expect(err.message.length).toBeLessThan(500);
  });

  it('refuses a question template that reaches JS internals, like every template', async () => {
    const err = await failure(
      hatch([{ name: 'Evil', type: 'ask', question: '{{ range.constructor("return process")() }}' }]),
      answers('x').ask,
    );
    expect(err.code).toBe('TEMPLATE');
    expect(err.message).toMatch(/"constructor" cannot be accessed in templates/);
  });

  it('passes the run signal to the asker: cancelling the run ends the question', async () => {
    const controller = new AbortController();
    const runtime = new Runtime({ env: {} });
    const ask: AskFn = (_q, signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(new Error('asker saw the abort')));
        controller.abort();
      });
    await expect(
      runtime.run(load(colour()), { input: 'x', ask, signal: controller.signal }),
    ).rejects.toMatchObject({
      code: 'ABORTED',
    });
    await runtime.close();
  });
});

describe('ask node: load-time checks', () => {
  it('reports repeated choices (ignoring case), empty choices, choices with schema, and a bad schema', () => {
    expect(
      problems(hatch([{ name: 'A', type: 'ask', question: 'q', choices: ['yes', 'No', 'no'] }])),
    ).toEqual(['nodes/0/choices/2: "no" repeats choice 1 ("No"); answers match ignoring case']);
    expect(problems(hatch([{ name: 'A', type: 'ask', question: 'q', choices: [] }])).join('\n')).toMatch(
      /nodes\/0\/choices/,
    );
    expect(
      problems(
        hatch([{ name: 'A', type: 'ask', question: 'q', choices: ['a'], schema: { type: 'string' } }]),
      ),
    ).toEqual(['nodes/0/schema: give either choices or schema, not both']);
    expect(
      problems(hatch([{ name: 'A', type: 'ask', question: 'q', schema: { type: 'nonsense' } }])).join('\n'),
    ).toMatch(/nodes\/0\/schema: not a usable JSON Schema/);
  });

  it('checks the question like other templates: an undefined variable, a syntax error, a missing question', () => {
    expect(problems(hatch([{ name: 'A', type: 'ask', question: 'Hi {{ ctx.nobody }}' }])).join('\n')).toMatch(
      /nodes\/0\/question.*nobody/,
    );
    expect(problems(hatch([{ name: 'A', type: 'ask', question: 'Hi {{ ' }])).join('\n')).toMatch(
      /nodes\/0\/question/,
    );
    expect(problems(hatch([{ name: 'A', type: 'ask' }])).join('\n')).toMatch(/question/);
  });

  it('is in the editor JSON Schema, and approve on tool and script nodes too', () => {
    const nodes = (
      hatcheryJsonSchema().properties as {
        nodes: {
          items: { anyOf: { properties: Record<string, { const?: string; description?: string }> }[] };
        };
      }
    ).nodes.items.anyOf;
    const ask = nodes.find((n) => n.properties.type?.const === 'ask');
    expect(Object.keys(ask?.properties ?? {})).toEqual(
      expect.arrayContaining(['question', 'choices', 'schema', 'save_output']),
    );
    const approving = nodes.filter((n) =>
      n.properties.approve?.description?.startsWith('Ask a person before running'),
    );
    expect(approving).toHaveLength(2);
  });
});

describe('ask node inside a tool', () => {
  it('a question in a node: tool of a drone suspends the run instead of becoming a tool error for the model', async () => {
    const model = new ScriptedProvider([
      { toolCalls: [{ name: 'Confirm', args: { input: 'go?' } }] },
      'done',
    ]);
    const def = hatch([
      { name: 'Boss', usr_prompt: 'decide', tools: ['node:Confirm'] },
      { name: 'Confirm', type: 'ask', question: 'Confirm {{ ctx.input }}', choices: ['yes', 'no'] },
    ]);
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const err = await runtime.run(load(def), { input: 'x' }).catch((e: unknown) => e as HatcheryError);
    await runtime.close();
    expect(err).toBeInstanceOf(HatcheryError);
    expect((err as HatcheryError).code).toBe('INPUT_REQUIRED');
    expect((err as HatcheryError).context.question).toMatchObject({
      node: 'Confirm',
      question: 'Confirm go?',
    });
  });

  it('a question in a parallel branch suspends the run even with on_error: "continue"', async () => {
    const def = hatch([
      { name: 'Both', type: 'parallel', branches: ['Q', 'E'], on_error: 'continue' },
      { name: 'Q', type: 'ask', question: 'Which?' },
      echo('E', 'e'),
    ]);
    const err = await failure(def, undefined);
    expect(err.code).toBe('INPUT_REQUIRED');
    expect(err.context.question).toMatchObject({ node: 'Q', question: 'Which?' });
  });
});
