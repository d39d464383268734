import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { cancelDeadline, startDeadline } from '../../src/tools/deadline.js';
import { hatch, load, tempDir } from '../helpers.js';

/**
 * Tool calls share one timer per timeout value (src/tools/deadline.ts) instead of a Node Timeout
 * each: a hanging call must still time out on time among many quick ones, and an ended call's
 * timeout must never fire.
 */
const tools = `
export const echoSchema = { type: 'object', properties: { text: { type: 'string' } } };
export function echo(args) { return args.text ?? ''; }
export const hangSchema = { type: 'object', properties: {} };
export function hang() { return new Promise(() => {}); }
export const watchSchema = { type: 'object', properties: { marker: { type: 'string' } } };
export async function watch(args, ctx) {
  const { writeFileSync } = await import('node:fs');
  // Read only after a turn of the event loop: the call's signal is built lazily.
  await new Promise((r) => setTimeout(r, 20));
  const seen = { scope: ctx.scope === undefined && ctx.tc === undefined, aborted: ctx.signal.aborted };
  ctx.signal.addEventListener('abort', () =>
    writeFileSync(args.marker, JSON.stringify({ ...seen, code: ctx.signal.reason?.code })),
  );
  return new Promise(() => {});
}
`;

const runtime = () => new Runtime({ providers: { openai: new ScriptedProvider(() => 'ok') }, env: {} });

describe('tool timeouts through shared timers', () => {
  it('a hanging js: tool times out after timeout_ms while 200 quick calls with the same timeout end', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'tool.mjs'), tools);
    const names = Array.from({ length: 200 }, (_, i) => `B${i}`);
    const quick = (name: string) => ({
      name,
      type: 'tool',
      tool_name: 'js:tool.mjs#echo',
      tool_args: { text: name },
      timeout_ms: 300,
    });
    const ok = load(
      hatch([{ name: 'P', type: 'parallel', branches: names }, ...names.map(quick)], { max_steps: 1000 }),
      dir,
    );
    const rt = runtime();
    const res = await rt.run(ok, { input: '' });
    expect(res.output).toContain('B199');
    const slow = load(
      hatch(
        [
          { name: 'P', type: 'parallel', branches: [...names, 'H'] },
          ...names.map(quick),
          { name: 'H', type: 'tool', tool_name: 'js:tool.mjs#hang', tool_args: {}, timeout_ms: 300 },
        ],
        { max_steps: 1000 },
      ),
      dir,
    );
    const t0 = performance.now();
    const err = (await rt.run(slow, { input: '' }).catch((e) => e)) as HatcheryError;
    const took = performance.now() - t0;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/timed out after 300 ms/);
    expect(took).toBeGreaterThanOrEqual(295);
  });

  it('deadlines of one value fire in order, never before their time, and ended ones never fire', async () => {
    const fired: string[] = [];
    const t0 = performance.now();
    const at: Record<string, number> = {};
    const mark = (name: string) => () => {
      fired.push(name);
      at[name] = performance.now() - t0;
    };
    const a = startDeadline(40, mark('a'));
    const cancelled = Array.from({ length: 500 }, (_, i) => startDeadline(40, mark(`x${i}`)));
    await new Promise((r) => setTimeout(r, 15));
    const b = startDeadline(40, mark('b'));
    const bAt = performance.now() - t0;
    startDeadline(10, mark('short'));
    for (const d of cancelled) cancelDeadline(d);
    await new Promise((r) => setTimeout(r, 120));
    // Where "short" (another value) falls against "a" depends on how late the 15 ms sleep woke up on a
    // loaded machine; the order within one value, and no deadline before its time, do not.
    expect(fired.filter((f) => f !== 'short')).toEqual(['a', 'b']);
    expect(fired).toContain('short');
    expect(at.short).toBeGreaterThanOrEqual(bAt + 9);
    expect(at.a).toBeGreaterThanOrEqual(39);
    expect(at.b).toBeGreaterThanOrEqual(bAt + 39);
    // Ending a deadline that already fired is harmless.
    cancelDeadline(a);
    cancelDeadline(b);
    const c = startDeadline(20, mark('c'));
    cancelDeadline(c);
    await new Promise((r) => setTimeout(r, 50));
    expect(fired).toHaveLength(3);
  });

  it('calls that end one by one leave no deadline behind, and a later one still fires on its time', async () => {
    const fired: string[] = [];
    // Each ends before the next starts (a fan-out of fast tools): the lane stays, nothing fires.
    for (let i = 0; i < 2000; i++) cancelDeadline(startDeadline(30, () => fired.push(`x${i}`)));
    await new Promise((r) => setTimeout(r, 15));
    const t0 = performance.now();
    let at = 0;
    startDeadline(30, () => {
      fired.push('late');
      at = performance.now() - t0;
    });
    await new Promise((r) => setTimeout(r, 80));
    expect(fired).toEqual(['late']);
    expect(at).toBeGreaterThanOrEqual(29);
  });

  it("a js: tool's signal, read late, aborts at its timeout, and the tool sees nothing of the run", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'tool.mjs'), tools);
    const marker = path.join(dir, 'marker.json');
    const h = load(
      hatch([{ type: 'tool', tool_name: 'js:tool.mjs#watch', tool_args: { marker }, timeout_ms: 200 }]),
      dir,
    );
    const err = (await runtime()
      .run(h, { input: '' })
      .catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    await new Promise((r) => setTimeout(r, 20));
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toEqual({
      scope: true,
      aborted: false,
      code: 'TIMEOUT',
    });
  });
});
