import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHatcheryObject } from '../../src/loader/load.js';
import { HatcheryRegistry } from '../../src/mcp/registry.js';
import { HatcheryWatcher } from '../../src/mcp/watcher.js';
import { tempDir } from '../helpers.js';
import { echoDef, hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';
import { cli, deepDef } from './loader-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('deeply nested files', () => {
  it('validate names the file, the JSON path and the depth limit (exit 3), no stack overflow', async () => {
    const dir = tempDir();
    const deep = path.join(dir, 'deep.json');
    writeFileSync(deep, JSON.stringify(deepDef('deep')));
    const good = writeHatchery(dir, 'good.json', echoDef('good'));
    const r = await cli(['validate', dir]);
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).not.toMatch(/call stack/i);
    const line = r.stdout.split('\n').find((l) => l.startsWith(deep))!;
    expect(line).toMatch(
      /^\S+deep\.json: nodes\/0\/tool_args\/deep\/a\/a\/.*nested more than 64 levels deep/,
    );
    expect(line.length).toBeLessThan(600);
    expect(r.stdout).toContain(`${good}: ok (good, 1 node, needs input)`);
    expect(r.stderr).toContain('1 valid, 1 invalid');
  });

  it('refuses deep arrays and cyclic objects built in code too', () => {
    let arr: unknown = [];
    for (let i = 0; i < 100_000; i++) arr = [arr];
    const res = loadHatcheryObject({ ...echoDef('a'), desc: arr }, '/tmp/a.json');
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error.message).toMatch(/^\/tmp\/a\.json: desc\/0\/0\/.*the limit is 64/);
    const cyclic: Record<string, unknown> = { ...echoDef('b') };
    cyclic.self = cyclic;
    const res2 = loadHatcheryObject(cyclic, '/tmp/b.json');
    expect(res2.ok).toBe(false);
    if (!res2.ok) expect(res2.error.message).toMatch(/the limit is 64/);
  });

  it('serve starts with the other files, and later edits still reload', async () => {
    const dir = hatcheryDir();
    const deep = writeHatchery(dir, 'deep.json', deepDef('deep'));
    writeHatchery(dir, 'other.json', echoDef('other', 'v1:'));
    const s = await spawnCli(dir);
    cleanups.push(s.close);
    const names = async () => (await s.client.listTools()).tools.map((t) => t.name);
    expect(await names()).toContain('other');
    expect(await names()).not.toContain('deep');
    expect(s.stderr()).toContain(`${deep}: nodes/0/tool_args/deep/a`);
    expect(s.stderr()).toMatch(/the limit is 64/);

    // The bad file edited (still too deep) and a good file edited: the good edit is served.
    writeHatchery(dir, 'deep.json', deepDef('deep', 3000));
    const before = s.watch.listChanged;
    writeHatchery(dir, 'other.json', echoDef('other', 'v2:'));
    await waitFor(() => s.watch.listChanged > before, 10_000, 'list_changed after editing other.json');
    expect(textOf(await s.client.callTool({ name: 'other', arguments: { input: 'a' } }))).toBe('v2:a');

    // Fixing the deep file serves it.
    const beforeFix = s.watch.listChanged;
    writeHatchery(dir, 'deep.json', echoDef('deep', 'fixed:'));
    await waitFor(() => s.watch.listChanged > beforeFix, 10_000, 'list_changed after fixing deep.json');
    expect(textOf(await s.client.callTool({ name: 'deep', arguments: { input: 'a' } }))).toBe('fixed:a');
  });

  it("an exception while loading one file is that file's error; the others are served", async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'a.json', echoDef('a'));
    writeHatchery(dir, 'b.json', echoDef('b'));
    // Load options whose MCP server list throws when read: stands for any bug in the loader.
    const mcpServers = new Proxy(
      {},
      {
        ownKeys() {
          throw new RangeError('Maximum call stack size exceeded');
        },
      },
    );
    const registry = new HatcheryRegistry(dir, { load: { mcpServers } });
    const change = await registry.loadAll();
    expect(change.problems).toHaveLength(2);
    expect(change.problems[0]).toMatch(/a\.json: .*RangeError: Maximum call stack size exceeded/);
    const again = await registry.refresh([path.join(dir, 'a.json')]);
    expect(again.problems[0]).toMatch(/a\.json/);
  });

  it('a reload that throws (and a log that throws) never stops later reloads', async () => {
    const dir = hatcheryDir();
    const batches: string[][] = [];
    const watcher = new HatcheryWatcher(dir, {
      debounceMs: 60,
      onChange: async (paths) => {
        batches.push(paths);
        if (batches.length === 1) throw new RangeError('Maximum call stack size exceeded');
      },
      onError: () => {
        throw new Error('the log is gone');
      },
    });
    await watcher.start();
    cleanups.push(() => watcher.close());
    const a = writeHatchery(dir, 'a.json', echoDef('a'));
    await waitFor(() => batches.length >= 1, 10_000, 'the first batch');
    await watcher.idle();
    const b = writeHatchery(dir, 'b.json', echoDef('b'));
    await waitFor(() => batches.length >= 2, 10_000, 'the batch after the failed one');
    expect(batches[0]).toEqual([a]);
    expect(batches[1]).toEqual([b]);
  });
});
