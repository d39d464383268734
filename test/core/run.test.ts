import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

describe('runs', () => {
  it('gives every run its own ctx, even when runs overlap', async () => {
    const model = new ScriptedProvider({
      delayMs: 5,
      reply: (req) => `seen: ${req.messages[0]?.content}`,
    });
    const h = load(
      hatch([
        { name: 'Ask', usr_prompt: '{{ ctx.input }}', save_output: 'answer', next: 'Show' },
        echo('Show', '{{ ctx.input }} -> {{ ctx.answer }}'),
      ]),
    );
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const inputs = Array.from({ length: 50 }, (_, i) => `q${i}`);
    const outputs = await Promise.all(inputs.map((input) => runtime.run(h, { input }).then((r) => r.output)));
    expect(outputs).toEqual(inputs.map((q) => `${q} -> seen: ${q}`));
  });

  it('passes text along save_output and out, and appends write_output lines', async () => {
    const dir = tempDir();
    const h = load(
      hatch([
        echo('A', 'first {{ ctx.input }}', {
          save_output: 'a',
          write_output: 'logs/{{ ctx.input }}.txt',
          next: 'B',
        }),
        echo('B', '{{ ctx.a }} / {{ out.A }}', { write_output: 'logs/{{ ctx.input }}.txt' }),
      ]),
      dir,
    );
    // The hatchery's own folder is protected; --allow-write on it lets runs write there.
    const runtime = new Runtime({ env: {}, allowWrite: [dir] });
    const res = await runtime.run(h, { input: 'x' });
    expect(res.output).toBe('first x / first x');
    expect(res.outputs).toEqual({ A: 'first x', B: 'first x / first x' });
    await runtime.run(h, { input: 'x' });
    expect(readFileSync(path.join(dir, 'logs', 'x.txt'), 'utf8')).toBe(
      'first x\nfirst x / first x\nfirst x\nfirst x / first x\n',
    );
  });

  it('refuses write_output outside the roots', async () => {
    const h = load(hatch([echo('A', 'x', { write_output: '../../escape.txt' })]));
    await expect(new Runtime({ env: {} }).run(h)).rejects.toMatchObject({
      code: 'PATH_DENIED',
      context: { node: 'A', field: 'write_output' },
    });
  });

  it('requires every declared input and names the missing ones and unknown ones', async () => {
    const h = load(
      hatch([echo('A', '{{ ctx.topic }} {{ ctx.tone }}')], { inputs: { topic: 'Topic', tone: 'Tone' } }),
    );
    const runtime = new Runtime({ env: {} });
    expect((await runtime.run(h, { vars: { topic: 'cats', tone: 'dry' } })).output).toBe('cats dry');
    await expect(runtime.run(h, { vars: { topic: 'cats' } })).rejects.toMatchObject({
      code: 'MISSING_INPUT',
      message: expect.stringContaining('missing input: tone (Tone); pass --set tone=...'),
    });
    await expect(runtime.run(h, { vars: { topic: 'a', tone: 'b', tpoic: 'c' } })).rejects.toMatchObject({
      code: 'MISSING_INPUT',
      message: expect.stringContaining(
        '"tpoic" is not a declared input of test (did you mean "topic"?); declared inputs: topic, tone',
      ),
    });
  });

  it('emits run and node events with outputs and token usage', async () => {
    const model = new ScriptedProvider([{ text: 'hello', usage: { inputTokens: 10, outputTokens: 3 } }]);
    const h = load(hatch([{ name: 'Say', usr_prompt: 'hi', next: 'Echo' }, echo('Echo', '{{ out.Say }}!')]));
    const events: RunEvent[] = [];
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const res = await runtime.run(h, { onEvent: (e) => events.push(e) });
    expect(events.map((e) => e.type)).toEqual([
      'run_start',
      'node_start',
      'model_call',
      'node_end',
      'node_start',
      'tool_start',
      'tool_call',
      'node_end',
      'run_end',
    ]);
    expect(events[2]).toMatchObject({
      type: 'model_call',
      node: 'Say',
      text: 'hello',
      usage: { inputTokens: 10, outputTokens: 3 },
    });
    expect(events[3]).toMatchObject({
      node: 'Say',
      step: 1,
      output: 'hello',
      usage: { inputTokens: 10, outputTokens: 3 },
      path: '',
      seq: 1,
      next: 'Echo',
    });
    expect(events.at(-1)).toMatchObject({
      ok: true,
      output: 'hello!',
      steps: 2,
      usage: { inputTokens: 10, outputTokens: 3 },
    });
    // The default model (gpt-5.4-mini) is in the price table: $0.75 in, $4.50 out per million tokens.
    expect(res.usage).toEqual({ inputTokens: 10, outputTokens: 3, costUsd: (10 * 0.75 + 3 * 4.5) / 1e6 });
  });

  it('keeps running when an event listener throws', async () => {
    const h = load(hatch([echo('A', 'fine')]));
    const res = await new Runtime({ env: {} }).run(h, {
      onEvent: () => {
        throw new Error('broken listener');
      },
    });
    expect(res.output).toBe('fine');
  });

  it('cancels a run in the middle of a model call', async () => {
    // The reply outlasts the test timeout: the run settles only by aborting the call.
    const model = new ScriptedProvider({ delayMs: 60_000, reply: () => 'too late' });
    const h = load(hatch([{ name: 'Slow', usr_prompt: 'x' }]));
    const ctrl = new AbortController();
    const run = new Runtime({ providers: { openai: model }, env: {} }).run(h, { signal: ctrl.signal });
    await vi.waitFor(() => expect(model.callCount).toBe(1), { timeout: 5000 });
    ctrl.abort();
    const err = await run.catch((e: unknown) => e as HatcheryError);
    expect(err).toMatchObject({ code: 'ABORTED' });
    expect(model.calls[0]!.signal.aborted).toBe(true);
  });
});

describe('models and keys', () => {
  const twoDrones = (model?: string) =>
    hatch([
      { name: 'First', usr_prompt: 'a', next: 'Second' },
      { name: 'Second', usr_prompt: 'b', ...(model ? { model } : {}) },
    ]);

  it('fails before any call when a drone needs a missing key, naming the variable and the node', async () => {
    const openai = new ScriptedProvider(['never']);
    const runtime = new Runtime({ providers: { openai }, env: {} });
    const err = (await runtime
      .run(load(twoDrones('anthropic:claude-test')))
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toMatchObject({
      code: 'MISSING_API_KEY',
      context: { node: 'Second', variable: 'ANTHROPIC_API_KEY' },
    });
    expect(err.message).toContain('needs ANTHROPIC_API_KEY');
    expect(openai.calls).toHaveLength(0);
  });

  it('says how to get a model when there is no key at all', async () => {
    const err = (await new Runtime({ env: {} })
      .run(load(twoDrones()))
      .catch((e: unknown) => e)) as HatcheryError;
    expect(err).toMatchObject({ code: 'NO_MODEL', context: { node: 'First' } });
    expect(err.message).toContain('set OPENAI_API_KEY or ANTHROPIC_API_KEY');
  });

  it('routes model strings to vendors: prefixes, claude- names, HATCHERY_MODEL, file defaults', async () => {
    const openai = new ScriptedProvider({ reply: (r) => `openai:${r.model}` });
    const anthropic = new ScriptedProvider({ reply: (r) => `anthropic:${r.model}` });
    const runtime = (env: Record<string, string>) => new Runtime({ providers: { openai, anthropic }, env });
    const one = (model?: string, extra = {}) =>
      load(hatch([{ usr_prompt: 'x', ...(model ? { model } : {}) }], extra));
    expect((await runtime({}).run(one('claude-x'))).output).toBe('anthropic:claude-x');
    expect((await runtime({}).run(one('anthropic:foo'))).output).toBe('anthropic:foo');
    expect((await runtime({}).run(one('llama3'))).output).toBe('openai:llama3');
    expect((await runtime({}).run(one(undefined, { model: 'claude-file' }))).output).toBe(
      'anthropic:claude-file',
    );
    expect((await runtime({ HATCHERY_MODEL: 'claude-env' }).run(one())).output).toBe('anthropic:claude-env');
  });
});
