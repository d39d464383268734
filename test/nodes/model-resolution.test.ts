import { describe, expect, it } from 'vitest';
import { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load } from '../helpers.js';

/**
 * A drone resolves its model once per runtime and sampling client, not on every execution: the
 * answer must still follow the runtime (its keys, its providers) and the run's sampling client.
 */
describe("a drone's model follows the runtime and the run's client", () => {
  const file = () =>
    load(
      hatch([
        { name: 'A', usr_prompt: 'one {{ ctx.input }}', next: 'B' },
        { name: 'B', usr_prompt: 'two {{ out.A }}', model: 'sampling' },
      ]),
    );

  it('two runtimes sharing one loaded file each call their own providers', async () => {
    const h = file();
    const p1 = new ScriptedProvider(() => 'from p1');
    const p2 = new ScriptedProvider(() => 'from p2');
    const s1 = new ScriptedProvider(() => 'client 1');
    const r1 = new Runtime({ providers: { openai: p1 }, env: {} });
    const r2 = new Runtime({ providers: { openai: p2 }, env: {} });
    for (let i = 0; i < 2; i++) {
      expect((await r1.run(h, { input: 'x', sampling: s1 })).outputs).toEqual({
        A: 'from p1',
        B: 'client 1',
      });
      expect((await r2.run(h, { input: 'x', sampling: s1 })).outputs).toEqual({
        A: 'from p2',
        B: 'client 1',
      });
    }
    expect(p1.callCount).toBe(2);
    expect(p2.callCount).toBe(2);
  });

  it("each run's sampling client answers that run's drones, concurrent runs included", async () => {
    const h = file();
    const rt = new Runtime({ providers: { openai: new ScriptedProvider(() => 'model') }, env: {} });
    const clients = [0, 1, 2, 3].map((i) => new ScriptedProvider({ reply: () => `client ${i}`, delayMs: 5 }));
    const results = await Promise.all(clients.map((sampling) => rt.run(h, { input: 'x', sampling })));
    expect(results.map((r) => r.output)).toEqual(['client 0', 'client 1', 'client 2', 'client 3']);
    for (const c of clients) expect(c.callCount).toBe(1);
  });

  it('a missing key fails every run, and a runtime that has the key succeeds with the same file', async () => {
    const h = load(hatch([{ name: 'A', usr_prompt: 'hi', model: 'anthropic:claude-sonnet-5-5' }]));
    const keyless = new Runtime({ env: {} });
    for (let i = 0; i < 2; i++) {
      const err = await keyless.run(h).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HatcheryError);
      expect((err as HatcheryError).code).toBe('MISSING_API_KEY');
    }
    const keyed = new Runtime({ env: {}, providers: { anthropic: new ScriptedProvider(() => 'keyed') } });
    expect((await keyed.run(h)).output).toBe('keyed');
  });
});
