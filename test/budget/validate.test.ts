/** Bad budgets and prices are refused before anything runs: in the file (validate, with file and field) and on the command line. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hatch, problems, runCli, tempDir } from '../helpers.js';

const base = (extra: Record<string, unknown>) =>
  hatch([{ name: 'A', type: 'tool', tool_name: 'echo', tool_args: { text: 'a' } }], extra);

describe('budget in the file', () => {
  it.each([
    ['zero', { tokens: 0 }, 'budget/tokens: must be more than 0, not the number 0'],
    ['negative', { cost_usd: -1 }, 'budget/cost_usd: must be more than 0, not the number -1'],
    ['a string', { tool_calls: '5' }, 'budget/tool_calls: must be a number more than 0, not the text "5"'],
    ['null', { wall_ms: null }, 'budget/wall_ms: must be a number'],
  ])('%s is rejected naming the field', (_what, budget, message) => {
    const found = problems(base({ budget }));
    expect(
      found.some((p) => p.startsWith(message)),
      found.join('\n'),
    ).toBe(true);
  });

  it('an unknown limit suggests the right one', () => {
    expect(problems(base({ budget: { token: 5 } }))).toEqual([
      'budget/token: unknown key "token" (did you mean "tokens"?)',
    ]);
  });

  it('valid limits load', () => {
    expect(
      problems(
        base({
          budget: { tokens: 10, cost_usd: 0.5, tool_calls: 3, model_calls: 2, wall_ms: 1000 },
          cache: false,
        }),
      ),
    ).toEqual([]);
  });

  it('bad prices are rejected naming the model and field', () => {
    const found = problems(
      base({ prices: { 'openai:x': { input: -2, output: 1 }, bare: { input: 1, output: 1 } } }),
    ).join('\n');
    expect(found).toMatch(/prices\/openai:x\/input: must be at least 0, not the number -2/);
    expect(found).toMatch(/prices\/bare: must be "vendor:model"/);
  });

  it('validate prints the file, the field and its line; exit 3', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(base({ budget: { model_calls: 0 } }), null, 2));
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(3);
    expect(`${r.stdout}${r.stderr}`).toContain('bad.json');
    expect(`${r.stdout}${r.stderr}`).toMatch(/budget\/model_calls.*must be more than 0/);
  });
});

describe('--budget-* flags', () => {
  it.each([
    ['--budget-tokens', '0'],
    ['--budget-cost-usd', '-0.5'],
    ['--budget-tool-calls', 'many'],
    ['--budget-model-calls', ''],
    ['--budget-wall-ms', 'Infinity'],
  ])('%s %j is a usage error (exit 2) naming the flag', async (flag, value) => {
    const dir = tempDir();
    const file = path.join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(base({})));
    // --flag=value: a value starting with "-" is otherwise taken for an option.
    const r = await runCli(['run', file, `${flag}=${value}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${flag} must be a positive number, got "${value}"`);
  });

  it('serve refuses them the same way before it starts', async () => {
    const r = await runCli(['serve', '--dir', tempDir(), '--budget-tokens=-1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--budget-tokens must be a positive number, got "-1"');
  });
});
