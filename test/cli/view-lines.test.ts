/**
 * What `run` prints on stderr without a terminal (CI, pipes): one plain line per event, in order,
 * indented by the place of the event in the run tree; --verbose, --events and --json; the exit codes.
 * The built CLI against the fake OpenAI server, which can hold a reply, answer 429 and count requests.
 */
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { pick } from '../ask/fixtures.js';
import { fakeVendors } from '../fakes/vendors.js';
import { type CliFolder, type CliProcess, cliFolder, echo, hatch, tempDir } from '../helpers.js';

const { openai } = fakeVendors();
const KEY = 'sk-view-test-key-0123456789';
/** A secret of another service, planted in a prompt: --verbose and --events must not show it. */
const TOKEN = 'planted-service-token-9f8e7d6c';

let folder: CliFolder;
beforeEach(() => {
  folder = cliFolder({ prefix: 'hatchery-view-', env, runArgs: ['--no-journal'] });
  openai.reset();
});

const env = () => ({
  OPENAI_API_KEY: KEY,
  OPENAI_BASE_URL: openai.baseURL,
  HATCHERY_MODEL: 'openai:gpt-test',
  MY_SERVICE_TOKEN: TOKEN,
});

/** A parallel node with two branches, then a drone that calls a hatch: tool once. */
function tree(): string {
  folder.write('leaf.json', hatch([echo('Leaf', 'leaf got {{ ctx.input }}')], { name: 'leaf' }));
  return folder.write(
    'tree.json',
    hatch([
      { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Ask' },
      echo('A', 'a'),
      echo('B', 'b'),
      { name: 'Ask', usr_prompt: 'go', tools: ['hatch:leaf.json'] },
    ]),
  );
}

/** The index of the first line matching `re`, failing the test when none does. */
function at(lines: string[], re: RegExp): number {
  const i = lines.findIndex((l) => re.test(l));
  expect(i, `no line matches ${re}:\n${lines.join('\n')}`).toBeGreaterThanOrEqual(0);
  return i;
}

/** Waits until the process's stderr matches `re`. */
async function waitFor(p: CliProcess, re: RegExp): Promise<void> {
  await expect.poll(() => p.err(), { timeout: 20_000, interval: 20 }).toMatch(re);
}

describe('run without a terminal', () => {
  it('prints branches under their parallel node, a tool call under its drone and the hatch: run under the call', async () => {
    openai.enqueue({ toolCalls: [{ name: 'leaf', args: { input: 'x' } }] }, 'used the leaf');
    const r = await folder.run(tree(), ['--input', 'go']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('used the leaf\n');
    const lines = r.stderr.trimEnd().split('\n');
    const pStart = at(lines, /^\[1\] P started \(parallel\)$/);
    const aStart = at(lines, /^ {2}\[\d\] A started \(baneling\)$/);
    const bStart = at(lines, /^ {2}\[\d\] B started \(baneling\)$/);
    const aEnd = at(lines, /^ {2}\[\d\] A \((\d+ ms|\d+\.\d s)\)$/);
    const pEnd = at(lines, /^\[1\] P \((\d+ ms|\d+\.\d s)\)$/);
    // The node's start comes first, its branches (indented) next, its end after them.
    expect(pStart).toBeLessThan(Math.min(aStart, bStart));
    expect(Math.max(aEnd, bStart)).toBeLessThan(pEnd);
    // Each echo baneling's own tool call sits under it.
    const inside = lines.slice(pStart + 1, pEnd);
    expect(inside.filter((l) => /^ {4}- tool echo started$/.test(l))).toHaveLength(2);
    expect(inside.filter((l) => /^ {4}- tool echo \((\d+ ms|\d+\.\d s)\)$/.test(l))).toHaveLength(2);
    // The drone: its model call, its hatch: tool call, the nested run under the call, the next model call.
    const rest = lines.slice(pEnd + 1);
    expect(
      rest.map((l) => l.replace(/\((\d+ ms|\d+(\.\d+)? s)[^)]*\)/, '(T)').replace(/\[\d+\]/, '[N]')),
    ).toEqual([
      '[N] Ask started (drone)',
      '  ~ model gpt-test (T)',
      '  - tool leaf started',
      '    > leaf',
      '      [N] Leaf started (baneling)',
      '        - tool echo started',
      '        - tool echo (T)',
      '      [N] Leaf (T)',
      '  - tool leaf (T)',
      '  ~ model gpt-test (T)',
      '[N] Ask (T)',
      rest.at(-1),
    ]);
    expect(rest.at(-1)).toMatch(/^done: 5 steps, (\d+ ms|\d+\.\d s), \d+\+\d+ tokens$/);
  });

  it('shows a node when it starts: a slow model call does not hide it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    openai.enqueue(async () => {
      await held;
      return 'finally';
    });
    const file = folder.write('slow.json', hatch([{ name: 'Slow', usr_prompt: 'take your time' }]));
    const p = folder.start(['run', file, '--input', 'x', '--no-journal']);
    p.child.stdin.end();
    // The model has not answered (it cannot: the reply is held), and the node is already on screen.
    await waitFor(p, /\[1\] Slow started \(drone\)\n/);
    expect(p.err()).not.toMatch(/\[1\] Slow \(/);
    release();
    expect(await p.exit).toBe(0);
    expect(p.err()).toMatch(/\[1\] Slow started \(drone\)\n {2}~ model gpt-test \(.+\)\n\[1\] Slow \(/);
  });

  it('shows a rate-limited retry and its wait, then the call that succeeded after it', async () => {
    openai.enqueue(
      { status: 429, message: 'slow down please', headers: { 'retry-after-ms': '30' } },
      'after the wait',
    );
    const file = folder.write('retry.json', hatch([{ name: 'Busy', usr_prompt: 'hello' }]));
    const r = await folder.run(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /\n {2}~ model gpt-test: retry 1, rate limited: waiting 30 ms \(.*429.*slow down please.*\)\n {2}~ model gpt-test after 1 retry \(/,
    );
    expect(openai.requests).toHaveLength(2);
  });

  it("shows the model that stands in for the client's (client_fallback, no client from the CLI)", async () => {
    openai.enqueue('from the fallback');
    const file = folder.write(
      'fallback.json',
      hatch([{ name: 'Draft', usr_prompt: 'x', model: 'client', client_fallback: 'openai:gpt-fallback' }]),
    );
    const r = await folder.run(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\n {2}~ model gpt-fallback standing in for client \((\d+ ms|\d+\.\d s)/);
  });

  it('shows a failing node in its line, without the control codes its error carried', async () => {
    const file = folder.write(
      'bad.json',
      hatch([
        {
          name: 'Boom',
          type: 'script',
          cmd: ['sh', '-c', 'printf "\\033]0;pwned\\007\\033[2Jbroken" >&2; exit 3'],
        },
      ]),
    );
    const r = await folder.run(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\n\[1\] Boom failed \((\d+ ms|\d+\.\d s)\): .*broken/);
    expect(r.stderr).toMatch(/failed: 1 step, /);
    const progress = r.stderr.slice(0, r.stderr.indexOf('\nerror ['));
    expect(progress).not.toMatch(/[\u001b\u0007]/);
  });
});

describe('run --verbose', () => {
  it('prints the prompt, the reply and the tool arguments and result, with secrets redacted', async () => {
    openai.enqueue({ toolCalls: [{ name: 'leaf', args: { input: `use ${TOKEN}` } }] });
    folder.write('leaf.json', hatch([echo('Leaf', 'leaf got {{ ctx.input }}')], { name: 'leaf' }));
    const file = folder.write(
      'verbose.json',
      hatch([
        {
          name: 'Ask',
          sys_prompt: 'You are careful.',
          usr_prompt: `call the leaf with the token ${TOKEN} and the key ${KEY}`,
          tools: ['hatch:leaf.json'],
        },
      ]),
    );
    const r = await folder.run(file, ['--verbose']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('┌ prompt of Ask to gpt-test');
    expect(r.stderr).toContain('system: You are careful.');
    expect(r.stderr).toContain('user: call the leaf with the token [redacted] and the key [redacted]');
    expect(r.stderr).toContain('┌ arguments of tool leaf');
    expect(r.stderr).toContain('{"input":"use [redacted]"}');
    expect(r.stderr).toContain('┌ result of tool leaf');
    expect(r.stderr).toContain('leaf got use [redacted]');
    // The second call shows only what is new in the conversation: the tool result, not the prompt again.
    expect(r.stderr).toMatch(/┌ prompt of Ask to gpt-test\n.*│ \.\.\.: 2 earlier messages/);
    expect(r.stderr).not.toContain(TOKEN);
    expect(r.stderr).not.toContain(KEY);
  });

  it('cuts a long text to a readable length', async () => {
    openai.enqueue('y'.repeat(5000));
    const file = folder.write('long.json', hatch([{ name: 'Long', usr_prompt: 'x'.repeat(5000) }]));
    const r = await folder.run(file, ['--verbose']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('… (3000 more characters)');
    expect(r.stderr).not.toContain('x'.repeat(2001));
  });
});

describe('run --events', () => {
  it('prints every event as one JSON line with its time; model requests included, no secret', async () => {
    openai.enqueue({ toolCalls: [{ name: 'leaf', args: { input: `use ${TOKEN}` } }] }, 'ok');
    folder.write('leaf.json', hatch([echo('Leaf', 'leaf got {{ ctx.input }}')], { name: 'leaf' }));
    const file = folder.write(
      'events.json',
      hatch([{ name: 'Ask', usr_prompt: `token ${TOKEN} key ${KEY}`, tools: ['hatch:leaf.json'] }]),
    );
    const r = await folder.run(file, ['--events']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain(TOKEN);
    expect(r.stderr).not.toContain(KEY);
    const events = r.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const e of events) expect(typeof e.at).toBe('number');
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('run_start');
    expect(types.at(-1)).toBe('run_end');
    expect(types).toEqual(
      expect.arrayContaining(['node_start', 'model_call', 'tool_start', 'tool_call', 'node_end']),
    );
    const call = events.find((e) => e.type === 'model_call') as {
      request: { messages: { content: string }[] };
    };
    expect(call.request.messages[0]!.content).toBe('token [redacted] key [redacted]');
    expect(events.find((e) => e.type === 'tool_start')).toMatchObject({
      tool: 'leaf',
      args: { input: 'use [redacted]' },
    });
    // Nothing but JSON lines: no progress, no summary.
    expect(r.stderr).not.toContain('done:');
  });

  it('on failure stderr stays JSON lines: the run_end event holds the error', async () => {
    openai.enqueue({ status: 400, message: `refused ${KEY}` });
    const file = folder.write('fail.json', hatch([{ name: 'One', usr_prompt: 'x' }]));
    const r = await folder.run(file, ['--events']);
    expect(r.code).toBe(1);
    const events = r.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.at(-1)).toMatchObject({ type: 'run_end', ok: false, code: 'PROVIDER' });
    expect(String(events.at(-1)!.error)).toContain('OpenAI API error 400: refused');
    expect(r.stderr).not.toContain(KEY);
  });

  it('--events with --quiet or --verbose is a usage error (exit 2)', async () => {
    const file = folder.write('one.json', hatch([echo('A', 'a')]));
    const both = await folder.run(file, ['--events', '--quiet']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--quiet and --events exclude each other');
    const verbose = await folder.run(file, ['--events', '--verbose']);
    expect(verbose.code).toBe(2);
  });
});

describe('run --json', () => {
  it('on failure prints the error with the run id and what the failed run used', async () => {
    openai.enqueue(
      { text: 'first', usage: { input: 100, output: 20 } },
      { status: 400, message: 'bad request here' },
    );
    const file = folder.write(
      'fails.json',
      hatch([
        { name: 'One', usr_prompt: 'a', next: 'Two', model: 'openai:gpt-5.4-mini' },
        { name: 'Two', usr_prompt: 'b' },
      ]),
    );
    const r = await folder.cli(['run', file, '--json', '-q']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    // Two steps ran (the second one failed); only the first one's model call used tokens.
    expect(out).toMatchObject({ code: 'PROVIDER', steps: 2, usage: { inputTokens: 100, outputTokens: 20 } });
    expect(out.error).toContain('bad request here');
    expect(out.run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.cost_usd).toBeGreaterThan(0);
  });

  it('on success prints output, value, usage, cost and steps', async () => {
    openai.enqueue({ text: 'hi', usage: { input: 10, output: 2 } });
    const file = folder.write('ok.json', hatch([{ name: 'One', usr_prompt: 'a' }]));
    const r = await folder.run(file, ['--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      output: 'hi',
      steps: 1,
      usage: { inputTokens: 10, outputTokens: 2 },
    });
  });
});

describe('runs resume', () => {
  it('shows the resumed run as run does, and --json on failure names the run and its totals', async () => {
    const state = path.join(tempDir('hatchery-view-state-'), 'runs');
    const file = folder.write(
      'two.json',
      hatch([
        { name: 'One', usr_prompt: 'a', next: 'Two' },
        { name: 'Two', usr_prompt: 'b' },
      ]),
    );
    openai.enqueue(
      { text: 'one', usage: { input: 10, output: 1 } },
      { status: 400, message: 'first refusal' },
    );
    const first = await folder.cli(['run', file, '--json', '-q', '--state', state]);
    expect(first.code).toBe(1);
    const id = JSON.parse(first.stdout).run_id as string;
    openai.enqueue({ status: 400, message: 'second refusal' });
    const again = await folder.cli(['runs', 'resume', id, '--json', '--state', state]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^\[1\] One \(from the journal\)\n\[2\] Two started \(drone\)\n/);
    expect(JSON.parse(again.stdout)).toMatchObject({ run_id: id, code: 'PROVIDER', steps: 2 });
    expect(JSON.parse(again.stdout).error).toContain('second refusal');
  });
});

describe('exit codes', () => {
  it('2 for a bad command line, 3 for an invalid file, 4 for a question without a terminal', async () => {
    const file = folder.write('one.json', hatch([echo('A', 'a')]));
    expect((await folder.run(file, ['--no-such-flag'])).code).toBe(2);
    expect(
      (await folder.run(folder.write('bad.json', { name: 'x', nodes: [{ name: 'A', next: 'Nowhere' }] })))
        .code,
    ).toBe(3);
    const asked = await folder.cli(['run', folder.write('pick.json', pick), '--input', 'the shed']);
    expect(asked.code).toBe(4);
    expect(asked.stderr).toMatch(/\[1\] Pick waits for an answer\n/);
    expect(asked.stderr).toMatch(/\nwaiting: 1 step, /);
  });

  it('5 when the budget runs out, with the totals in --json', async () => {
    openai.enqueue({ text: 'one', usage: { input: 50, output: 50 } }, 'two');
    const file = folder.write(
      'budget.json',
      hatch([
        { name: 'One', usr_prompt: 'a', next: 'Two' },
        { name: 'Two', usr_prompt: 'b' },
      ]),
    );
    const r = await folder.run(file, ['--budget-tokens', '50', '--json']);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 'BUDGET_EXHAUSTED',
      limit: 'tokens',
      steps: 2,
      usage: { inputTokens: 50, outputTokens: 50 },
    });
    expect(r.stderr).toMatch(/\nfailed: 2 steps, /);
  });

  it('130 when interrupted with Ctrl-C (SIGINT) during a model call', async () => {
    openai.enqueue(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      return 'too late';
    });
    const file = folder.write('long.json', hatch([{ name: 'Wait', usr_prompt: 'x' }]));
    const p = folder.start(['run', file, '--input', 'x', '--no-journal']);
    p.child.stdin.end();
    await waitFor(p, /\[1\] Wait started/);
    p.child.kill('SIGINT');
    expect(await p.exit).toBe(130);
    // The time is how long the signal took to arrive: "(85 ms)", or "(1.1 s)" on a loaded machine.
    expect(p.err()).toMatch(/\n\[1\] Wait cancelled \((\d+ ms|\d+\.\d s)\)\ncancelled: 1 step, /);
  });
});
