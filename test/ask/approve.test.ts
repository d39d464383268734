import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import type { AskFn, AskRequest } from '../../src/engine/contracts.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

/** An asker that gives `answer` to every question and records them. */
function always(answer: string): { ask: AskFn; asked: AskRequest[] } {
  const asked: AskRequest[] = [];
  return {
    asked,
    ask: async (q) => {
      asked.push(q);
      return answer;
    },
  };
}

/** A script node with approve: true that creates the file named by the run's input (a real program). */
function touching() {
  return hatch([{ name: 'Touch', type: 'script', cmd: ['touch', '{{ ctx.input }}'], approve: true }]);
}

async function run(def: unknown, ask: AskFn | undefined, input: string, dir = tempDir()) {
  const runtime = new Runtime({ env: {}, allowWrite: [dir] });
  try {
    return await runtime.run(load(def, dir), { input, ask });
  } finally {
    await runtime.close();
  }
}

async function runError(
  def: unknown,
  ask: AskFn | undefined,
  input: string,
  dir?: string,
): Promise<HatcheryError> {
  try {
    await run(def, ask, input, dir);
  } catch (err) {
    expect(err).toBeInstanceOf(HatcheryError);
    return err as HatcheryError;
  }
  throw new Error('the run did not fail');
}

describe('approve: true on a script node', () => {
  it('"yes" runs the program; the question shows the rendered argv and folder', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'made.txt');
    const a = always('yes');
    await run(touching(), a.ask, marker, dir);
    expect(existsSync(marker)).toBe(true);
    expect(a.asked).toHaveLength(1);
    expect(a.asked[0]).toMatchObject({ kind: 'approve', node: 'Touch', choices: ['yes', 'no'] });
    expect(a.asked[0]?.question).toContain(JSON.stringify(['touch', marker]));
    expect(a.asked[0]?.question).toMatch(/ in \//);
  });

  it('"no" fails with APPROVAL_DENIED and the program never runs', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'made.txt');
    const err = await runError(touching(), always('No').ask, marker, dir);
    expect(err.code).toBe('APPROVAL_DENIED');
    expect(String(err)).toMatch(/node "Touch": not approved .*nothing ran/);
    expect(existsSync(marker)).toBe(false);
  });

  it('an answer that is neither yes nor no twice fails and runs nothing', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'made.txt');
    const err = await runError(touching(), always('maybe').ask, marker, dir);
    expect(err.code).toBe('INVALID_ANSWER');
    expect(existsSync(marker)).toBe(false);
  });

  it('without an asker the run waits for approval (INPUT_REQUIRED) and nothing runs', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'made.txt');
    const err = await runError(touching(), undefined, marker, dir);
    expect(err.code).toBe('INPUT_REQUIRED');
    expect(err.context.question).toMatchObject({ kind: 'approve', node: 'Touch', choices: ['yes', 'no'] });
    expect(err.message).toMatch(/waits for approval: run \["touch",/);
    expect(existsSync(marker)).toBe(false);
  });

  it('redacts secrets of the environment from the question', async () => {
    const secret = 'hunter2-very-secret-value';
    process.env.HATCHERY_TEST_API_KEY = secret;
    try {
      const a = always('no');
      const def = hatch([
        {
          name: 'Leak',
          type: 'script',
          cmd: ['echo', '{{ ctx.input }}', 'sk-abcdefghijklmnopqrstuv'],
          approve: true,
        },
      ]);
      const err = await runError(def, a.ask, secret);
      expect(err.code).toBe('APPROVAL_DENIED');
      expect(a.asked[0]?.question).not.toContain(secret);
      expect(a.asked[0]?.question).not.toContain('abcdefghijklmnopqrstuv');
      expect(err.message).not.toContain(secret);
    } finally {
      delete process.env.HATCHERY_TEST_API_KEY;
    }
  });
});

describe('approve: true on a tool node', () => {
  const def = hatch([
    {
      name: 'Save',
      type: 'tool',
      tool_name: 'write_file',
      tool_args: { path: '{{ ctx.input }}', content: 'n={{ 6 * 7 }}' },
      approve: true,
    },
  ]);

  it('"yes" calls the tool; the question names the tool and its rendered arguments', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'out.txt');
    const a = always('YES');
    await run(def, a.ask, target, dir);
    expect(existsSync(target)).toBe(true);
    expect(a.asked[0]?.question).toContain('call tool "write_file"');
    expect(a.asked[0]?.question).toContain(JSON.stringify({ path: target, content: 'n=42' }));
  });

  it('"no" does not call it', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'out.txt');
    const err = await runError(def, always('no').ask, target, dir);
    expect(err.code).toBe('APPROVAL_DENIED');
    expect(existsSync(target)).toBe(false);
  });
});
