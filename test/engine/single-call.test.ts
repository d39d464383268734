/**
 * Drones without tools, schema or choice make one metered model call each. These check each node's
 * prompt and output, the model_call event and its request as sent, a provider that fails at once, and
 * no mix-up between two files with the same node names.
 */
import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest, ChatResponse, Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load } from '../helpers.js';

/** A chain N0 -> N1 -> ... where each drone continues from the one before. */
function chain(n: number, prefix = 'Continue from') {
  return hatch(
    Array.from({ length: n }, (_, i) => ({
      name: `N${i}`,
      usr_prompt: i === 0 ? '{{ ctx.input }}' : `${prefix} {{ out.N${i - 1} }}`,
      ...(i < n - 1 ? { next: `N${i + 1}` } : {}),
    })),
  );
}

describe('one-call drones', () => {
  it('render each prompt from the output before it, and a listener sees each request as sent', async () => {
    const model = new ScriptedProvider((req) => `re: ${req.messages[0]!.content}`);
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const events: RunEvent[] = [];
    const result = await runtime.run(load(chain(3)), { input: 'go', onEvent: (e) => events.push(e) });
    expect(result.output).toBe('re: Continue from re: Continue from re: go');
    expect(result.outputs).toEqual({
      N0: 're: go',
      N1: 're: Continue from re: go',
      N2: 're: Continue from re: Continue from re: go',
    });
    expect(result.steps).toBe(3);
    const calls = events.filter((e) => e.type === 'model_call');
    expect(calls.map((c) => c.request.messages)).toEqual(model.calls.map((c) => c.messages));
    for (const call of calls) {
      expect(call.request.system).toBe('You are a helpful assistant.');
      // The hook of retries is the provider's business, not the listener's.
      expect(call.request.onRetry).toBeUndefined();
      expect(call.error).toBeUndefined();
    }
    const ends = events.filter((e) => e.type === 'node_end');
    expect(ends.map((e) => [e.node, e.path, e.seq, e.next])).toEqual([
      ['N0', '', 1, 'N1'],
      ['N1', '', 2, 'N2'],
      ['N2', '', 3, null],
    ]);
    // The node's usage is the call's, priced once, and the run's is their sum.
    expect(ends.map((e) => e.usage)).toEqual(calls.map((c) => c.usage));
    expect(result.usage.inputTokens).toBe(3);
    await runtime.close();
  });

  it('fail with the error of a provider that throws at once, with the events of a failed call', async () => {
    const failing: Provider = {
      id: 'failing',
      chat(_req: ChatRequest): Promise<ChatResponse> {
        throw new HatcheryError('PROVIDER', 'the provider is down');
      },
    };
    const runtime = new Runtime({ providers: { openai: failing }, env: {} });
    const h = load(chain(2));
    for (const listen of [false, true]) {
      const events: RunEvent[] = [];
      const run = runtime.run(h, { input: 'go', onEvent: listen ? (e) => events.push(e) : undefined });
      await expect(run).rejects.toMatchObject({ code: 'PROVIDER', context: { node: 'N0' } });
      if (!listen) continue;
      const call = events.find((e) => e.type === 'model_call');
      expect(call).toMatchObject({ node: 'N0', code: 'PROVIDER', error: expect.stringContaining('down') });
      expect(events.find((e) => e.type === 'node_error')).toMatchObject({ node: 'N0', code: 'PROVIDER' });
    }
    await runtime.close();
  });

  it('follow the routes of their own file when two files share node names', async () => {
    const model = new ScriptedProvider((req) => req.messages[0]!.content.slice(0, 12));
    const runtime = new Runtime({ providers: { openai: model }, env: {} });
    const a = load(chain(3, 'A'));
    const b = load(
      hatch([
        { name: 'N0', usr_prompt: 'B {{ ctx.input }}', next: 'N2' },
        { name: 'N2', usr_prompt: 'B2 {{ out.N0 }}' },
      ]),
    );
    for (let i = 0; i < 3; i++) {
      const ra = await runtime.run(a, { input: 'x' });
      const rb = await runtime.run(b, { input: 'y' });
      expect(Object.keys(ra.outputs)).toEqual(['N0', 'N1', 'N2']);
      expect(ra.output).toBe('A A x');
      expect(Object.keys(rb.outputs)).toEqual(['N0', 'N2']);
      expect(rb.output).toBe('B2 B y');
    }
    await runtime.close();
  });
});
