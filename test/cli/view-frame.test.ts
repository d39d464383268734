/**
 * The live frame, drawn from the events of a real run (a parallel node, a drone calling a hatch: tool)
 * on a fake terminal stream of a given size: what it shows while the run goes on, that it fits the
 * terminal however many entries the run has, and that names and errors cannot drive the terminal.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderFrame } from '../../src/cli/view/frame.js';
import { openRunView } from '../../src/cli/view/run-view.js';
import { colorEnabled, paint } from '../../src/cli/view/style.js';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { RunTree } from '../../src/runtime/run-tree.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';
import { FINAL_TREE } from './view-shapes.js';

const plain = paint(false);
const strip = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

/** The events of a real run of a parallel node and a drone that calls a hatch: tool once. */
async function recorded(): Promise<RunEvent[]> {
  const dir = tempDir();
  writeFileSync(
    path.join(dir, 'leaf.json'),
    JSON.stringify(hatch([echo('Leaf', 'leaf got {{ ctx.input }}')], { name: 'leaf' })),
  );
  const model = new ScriptedProvider((req: ChatRequest) => {
    if (req.messages.at(-1)?.role === 'tool')
      return { text: 'used it', usage: { inputTokens: 30, outputTokens: 5 } };
    return { text: '', toolCalls: [{ id: 't1', name: 'leaf', args: { input: 'x' } }] };
  });
  const h = load(
    hatch([
      { name: 'P', type: 'parallel', branches: ['A', 'B'], next: 'Ask' },
      echo('A', 'a'),
      echo('B', 'b'),
      { name: 'Ask', usr_prompt: 'go', tools: ['hatch:leaf.json'] },
    ]),
    dir,
  );
  const events: RunEvent[] = [];
  await new Runtime({ providers: { openai: model }, env: {} }).run(h, {
    input: 'go',
    onEvent: (e) => events.push(e),
  });
  return events;
}

/** A fake terminal: what was written to it, its size and isTTY. */
function terminal(columns = 80, rows = 24) {
  let text = '';
  return {
    isTTY: true,
    columns,
    rows,
    write(chunk: string) {
      text += chunk;
      return true;
    },
    text: () => text,
  };
}

/** A tree with `n` finished nodes and one still running, as a long run has. */
function bigTree(n: number): RunTree {
  const tree = new RunTree('long', 0);
  const base = { runId: 'r', hatchery: 'long', depth: 0 } as const;
  for (let i = 1; i <= n; i++) {
    tree.apply({ ...base, type: 'node_start', node: `N${i}`, kind: 'drone', step: i }, i);
    tree.apply(
      { ...base, type: 'node_end', node: `N${i}`, step: i, output: '', ms: 1, seq: i, next: null },
      i + 1,
    );
  }
  tree.apply({ ...base, type: 'node_start', node: 'Last', kind: 'drone', step: n + 1 }, n + 2);
  return tree;
}

describe('the live frame', () => {
  it('draws the run as a tree: branches under their node, the tool call and nested run under the drone', async () => {
    const events = await recorded();
    const tree = new RunTree('test', 0);
    // Up to the start of the second branch: the parallel node and its branches run.
    const cut = events.findIndex((e) => e.type === 'node_start' && e.node === 'B');
    for (const e of events.slice(0, cut + 1)) tree.apply(e, 0);
    const running = renderFrame(tree, { columns: 80, rows: 24, now: 1200 }, plain).split('\n');
    expect(running[0]).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] test {2}\d+ steps {2}1\.2 s$/);
    const nodes = running.slice(1).filter((l) => !l.includes('tool'));
    expect(nodes.map((l) => l.replace(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, '*'))).toEqual([
      '  * P  parallel  1.2 s',
      '    * A  baneling  1.2 s',
      '    * B  baneling  1.2 s',
    ]);
    for (const e of events.slice(cut + 1)) tree.apply(e, 2000);
    const done = renderFrame(tree, { columns: 80, rows: 24, now: 2000 }, plain).split('\n');
    expect(done[0]).toMatch(/^✔ test {2}5 steps {2}.+ {2}\d+\+\d+ tokens, \$[\d.]+$/);
    const shape = done.slice(1).map((l) => l.replace(/(\S) {2}.*$/, '$1'));
    expect(shape).toEqual(FINAL_TREE);
    expect(done.find((l) => l.includes('✔ Ask'))).toMatch(/drone {2}(\d+ ms|\d+\.\d s) {2}\d+\+\d+ tokens/);
  });

  it('shows a model call waiting for a rate-limit retry with its countdown, and a stand-in model', () => {
    const tree = new RunTree('t', 0);
    const base = {
      runId: 'r',
      hatchery: 't',
      node: 'Ask',
      step: 1,
      depth: 0,
      vendor: 'openai',
      model: 'gpt-x',
    };
    tree.apply(
      { type: 'node_start', runId: 'r', hatchery: 't', node: 'Ask', kind: 'drone', step: 1, depth: 0 },
      0,
    );
    tree.apply(
      { ...base, type: 'model_retry', attempt: 2, waitMs: 4000, reason: '429 slow down', rateLimited: true },
      0,
    );
    const waiting = renderFrame(tree, { columns: 100, rows: 24, now: 1000 }, plain);
    expect(waiting).toMatch(
      / {4}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] model gpt-x {2}1\.0 s {2}retry 2, rate limited: waiting 3\.0 s \(429 slow down\)/,
    );
    const request = { model: 'gpt-x', system: '', messages: [], signal: new AbortController().signal };
    tree.apply(
      {
        ...base,
        type: 'model_call',
        request,
        text: 'ok',
        ms: 5000,
        retries: 2,
        standIn: 'client',
        usage: { inputTokens: 9, outputTokens: 1 },
      },
      5000,
    );
    const after = renderFrame(tree, { columns: 100, rows: 24, now: 5000 }, plain);
    expect(after).toMatch(/✔ model gpt-x {2}5\.0 s {2}9\+1 tokens {2}standing in for client {2}2 retries/);
  });

  it('keeps a frame of 1,000 finished nodes to the terminal height, the running one in view', () => {
    const tree = bigTree(1000);
    const frame = renderFrame(tree, { columns: 60, rows: 24, now: 5000 }, plain).split('\n');
    // One line stays free below the frame, so the terminal never scrolls its first line away.
    expect(frame.length).toBeLessThanOrEqual(23);
    expect(frame[0]).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] long {2}1001 steps/);
    expect(frame[1]).toMatch(/^ {2}… \d+ more done$/);
    expect(frame.at(-1)).toMatch(/^ {2}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Last {2}drone/);
    // The newest finished nodes stay in view, the count accounts for every other one.
    const more = Number(/(\d+) more done/.exec(frame[1]!)![1]);
    expect(more + frame.length - 3).toBe(1000);
    expect(frame.at(-2)).toMatch(/✔ N1000 /);
  });

  it('folds a finished parallel node into one line before it elides anything', () => {
    const tree = new RunTree('t', 0);
    const base = { runId: 'r', hatchery: 't', depth: 0 } as const;
    tree.apply({ ...base, type: 'node_start', node: 'Fan', kind: 'parallel', step: 1 }, 0);
    for (let i = 2; i < 40; i++) {
      tree.apply({ ...base, type: 'node_start', node: `B${i}`, kind: 'drone', step: i, parent: 1 }, 0);
      tree.apply(
        {
          ...base,
          type: 'node_end',
          node: `B${i}`,
          step: i,
          output: '',
          ms: 1,
          seq: i,
          next: null,
          parent: 1,
        },
        1,
      );
    }
    tree.apply({ ...base, type: 'node_end', node: 'Fan', step: 1, output: '', ms: 2, seq: 1, next: null }, 2);
    tree.apply({ ...base, type: 'node_start', node: 'Next', kind: 'drone', step: 40 }, 3);
    const frame = renderFrame(tree, { columns: 80, rows: 10, now: 10 }, plain).split('\n');
    expect(frame.slice(1)).toEqual(['  ✔ Fan  parallel  2 ms  (38 inside)', '  ⠋ Next  drone  7 ms']);
  });

  it('cuts lines to the terminal width and strips control codes from names and errors', () => {
    const tree = new RunTree('t', 0);
    const base = { runId: 'r', hatchery: 't', depth: 0 } as const;
    tree.apply({ ...base, type: 'node_start', node: '\x1b[2Jevil\x07', kind: 'script', step: 1 }, 0);
    tree.apply(
      {
        ...base,
        type: 'node_error',
        node: '\x1b[2Jevil\x07',
        step: 1,
        error: `\x1b]0;pwned\x07${'x'.repeat(300)}`,
        ms: 3,
      },
      3,
    );
    const colored = paint(true);
    const frame = renderFrame(tree, { columns: 40, rows: 24, now: 5 }, colored);
    for (const line of frame.split('\n')) expect(strip(line).length).toBeLessThanOrEqual(39);
    // The only escape codes left are the view's own colours.
    expect(frame.replace(/\x1b\[\d+m/g, '')).not.toMatch(/[\x1b\x07]/);
    expect(strip(frame)).toContain('✖ evil');
  });

  it('the whole view on a fake terminal: frames while running, the final frame and the summary line at the end', async () => {
    const events = await recorded();
    const stream = terminal(80, 24);
    let now = 0;
    const view = await openRunView({}, { stream, env: { TERM: 'xterm' }, clock: () => now, name: 'test' });
    expect(view.mode).toBe('live');
    for (const e of events) {
      now += 150;
      view.onEvent?.(e);
    }
    view.close();
    const out = stream.text();
    // Each redraw erases the lines of the one before (log-update's codes, not ours).
    expect(out).toContain('\x1b[2K');
    const screen = strip(out);
    expect(screen).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] P {2}parallel/);
    const tail = screen.slice(screen.lastIndexOf('✔ test'));
    expect(tail).toMatch(/✔ test {2}5 steps[^\n]*\n {2}✔ P {2}parallel/);
    expect(tail).toMatch(/ {2}✔ Ask {2}drone[^\n]*\n {4}✔ tool leaf/);
    expect(tail.trimEnd().split('\n').at(-1)).toMatch(
      /^done: 5 steps, (\d+ ms|\d+\.\d s), \d+\+\d+ tokens, \$[\d.]+$/,
    );
    expect(view.totals()).toMatchObject({ steps: 5, usage: { outputTokens: expect.any(Number) } });
  });
});

describe('colours', () => {
  it('follow NO_COLOR and FORCE_COLOR, else whether the stream is a terminal', () => {
    expect(colorEnabled({ isTTY: true }, { TERM: 'xterm' })).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorEnabled({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
    expect(paint(false).red('x')).toBe('x');
    expect(paint(true).red('x')).toBe('\x1b[31mx\x1b[39m');
  });
});
