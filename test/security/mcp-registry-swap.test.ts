/**
 * Issue 8: two files swapping `name` in one save kept the old definitions while the log said the
 * files were not served. The registry and what it reports must agree.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HatcheryRegistry } from '../../src/mcp/registry.js';
import { echoDef, hatcheryDir, inMemory, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** The echo prefix a served hatchery was loaded with. */
function prefixOf(reg: HatcheryRegistry, name: string): string | undefined {
  const node = (reg.get(name)?.hatchery.def.nodes as { tool_args?: { text?: string } }[] | undefined)?.[0];
  return node?.tool_args?.text?.replace('{{ ctx.input }}', '');
}

describe('registry and log agree on names', () => {
  it('serves two files that swap names in one save under their new names', async () => {
    const dir = hatcheryDir();
    const a = writeHatchery(dir, 'a.json', echoDef('alpha', 'A1:'));
    const b = writeHatchery(dir, 'b.json', echoDef('beta', 'B1:'));
    const reg = new HatcheryRegistry(dir);
    await reg.loadAll();
    writeHatchery(dir, 'a.json', echoDef('beta', 'A2:'));
    writeHatchery(dir, 'b.json', echoDef('alpha', 'B2:'));
    const change = await reg.refresh([a, b]);
    expect(change.problems).toEqual([]);
    expect(change.updated.sort()).toEqual(['alpha', 'beta']);
    expect(change.added).toEqual([]);
    expect(change.removed).toEqual([]);
    expect(reg.get('beta')?.file).toBe(a);
    expect(reg.get('alpha')?.file).toBe(b);
    expect(prefixOf(reg, 'beta')).toBe('A2:');
    expect(prefixOf(reg, 'alpha')).toBe('B2:');
    expect(reg.problems()).toEqual([]);
  });

  it('stops serving the old name of a file refused for a duplicate name, as its error says', async () => {
    const dir = hatcheryDir();
    const a = writeHatchery(dir, 'a.json', echoDef('alpha', 'A1:'));
    const b = writeHatchery(dir, 'b.json', echoDef('beta', 'B1:'));
    const reg = new HatcheryRegistry(dir);
    await reg.loadAll();
    writeHatchery(dir, 'a.json', echoDef('beta', 'A2:'));
    const change = await reg.refresh([a]);
    expect(change.problems).toEqual([
      `${a}: name "beta" is already used by ${b}; rename one of them (this file is not served until then)`,
    ]);
    expect(change.removed).toEqual(['alpha']);
    expect(reg.get('alpha')).toBeUndefined();
    expect(prefixOf(reg, 'beta')).toBe('B1:');
    // b gives the name up: a is served under it on the next refresh.
    writeHatchery(dir, 'b.json', echoDef('gamma', 'B2:'));
    const next = await reg.refresh([b]);
    expect(next.problems).toEqual([]);
    expect(reg.get('beta')?.file).toBe(a);
    expect(reg.get('gamma')?.file).toBe(b);
  });

  it('follows a swap saved while the server watches the folder', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'a.json', echoDef('alpha', 'A1:'));
    writeHatchery(dir, 'b.json', echoDef('beta', 'B1:'));
    const s = await inMemory(dir);
    close = s.close;
    writeHatchery(dir, 'a.json', echoDef('beta', 'A2:'));
    writeHatchery(dir, 'b.json', echoDef('alpha', 'B2:'));
    await waitFor(() => s.core.registry.get('alpha')?.file === path.join(dir, 'b.json'), 10_000, 'the swap');
    await s.core.idle();
    expect(textOf(await s.client.callTool({ name: 'alpha', arguments: { input: 'x' } }))).toBe('B2:x');
    expect(textOf(await s.client.callTool({ name: 'beta', arguments: { input: 'x' } }))).toBe('A2:x');
    expect(s.core.registry.problems()).toEqual([]);
    expect(s.watch.logs.join('\n')).not.toMatch(/not served/);
  });
});
