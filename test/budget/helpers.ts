/** Shared pieces of the budget tests: a Runtime wired to the fake vendor servers, and error capture. */
import { expect } from 'vitest';
import type { Hatchery, RunEvent } from '../../src/engine/contracts.js';
import { BudgetExhaustedError } from '../../src/engine/meter.js';
import { Runtime, type RuntimeOptions } from '../../src/runtime/runtime.js';
import type { FakeAnthropic } from '../fakes/fake-anthropic.js';
import type { FakeOpenAI } from '../fakes/fake-openai.js';

/** Environment pointing both vendors at the fakes. */
export function envOf(fakes: { openai: FakeOpenAI; anthropic: FakeAnthropic }): Record<string, string> {
  return {
    OPENAI_API_KEY: 'test',
    OPENAI_BASE_URL: fakes.openai.baseURL,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: fakes.anthropic.baseURL,
  };
}

/** A Runtime whose models are the fake servers. */
export function runtimeFor(
  fakes: { openai: FakeOpenAI; anthropic: FakeAnthropic },
  options: RuntimeOptions = {},
): Runtime {
  return new Runtime({ env: envOf(fakes), ...options });
}

/** Runs `h` expecting BUDGET_EXHAUSTED; returns the error and the events seen. */
export async function exhausted(
  runtime: Runtime,
  h: Hatchery,
  opts: Parameters<Runtime['run']>[1] = {},
): Promise<{ err: BudgetExhaustedError; events: RunEvent[] }> {
  const events: RunEvent[] = [];
  let caught: unknown;
  try {
    await runtime.run(h, { input: 'x', ...opts, onEvent: (e) => events.push(e) });
  } catch (err) {
    caught = err;
  }
  expect(caught, 'the run should fail').toBeInstanceOf(BudgetExhaustedError);
  const err = caught as BudgetExhaustedError;
  expect(err.code).toBe('BUDGET_EXHAUSTED');
  return { err, events };
}

/** A drone node on the fake OpenAI server. */
export const drone = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  model: 'openai:gpt-test',
  usr_prompt: `${name}: {{ ctx.input }}`,
  ...extra,
});
