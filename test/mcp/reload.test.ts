import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HatcheryRegistry } from '../../src/mcp/registry.js';
import { tempDir } from '../helpers.js';
import { echoDef, hatcheryDir, inMemory, textOf, waitFor, writeHatchery } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(dir: string, allowRoots?: string[]) {
  const s = await inMemory(dir, { allowRoots });
  cleanups.push(s.close);
  return s;
}

describe('hot reload', () => {
  it('adds, updates, keeps through breakage, and removes tools as files change', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'keep.json', echoDef('keep'));
    const { client, watch } = await setup(dir);
    const names = async () =>
      (await client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('hatchery_'));
    expect(await names()).toEqual(['keep']);

    // Add.
    const file = writeHatchery(dir, 'nested/new.json', echoDef('fresh', 'v1:'));
    await waitFor(() => watch.listChanged >= 1, 10_000, 'list_changed after add');
    expect(await names()).toEqual(['fresh', 'keep']);
    expect(textOf(await client.callTool({ name: 'fresh', arguments: { input: 'a' } }))).toBe('v1:a');

    // Edit.
    const beforeEdit = watch.listChanged;
    writeHatchery(dir, 'nested/new.json', echoDef('fresh', 'v2:', { desc: 'second version' }));
    await waitFor(
      async () =>
        watch.listChanged > beforeEdit &&
        (await client.listTools()).tools.find((t) => t.name === 'fresh')!.description === 'second version',
      10_000,
      'list_changed and the new description after edit',
    );
    expect(textOf(await client.callTool({ name: 'fresh', arguments: { input: 'a' } }))).toBe('v2:a');

    // A half-written file: the error is logged with the file; the last good version keeps working.
    writeFileSync(file, '{ "name": "fresh", "desc": ');
    await waitFor(() => watch.logs.some((l) => l.includes(file)), 10_000, 'the parse error as a log message');
    expect(watch.logs.find((l) => l.includes(file))).toMatch(/error|Unexpected|JSON|end/i);
    expect(textOf(await client.callTool({ name: 'fresh', arguments: { input: 'a' } }))).toBe('v2:a');

    // An invalid field: the JSON path is named.
    writeHatchery(dir, 'nested/new.json', {
      ...echoDef('fresh', 'v3:'),
      nodes: [{ type: 'tool', tool_name: 'echo', next: 'Nowhere' }],
    });
    await waitFor(() => watch.logs.some((l) => l.includes('nodes/0/next')), 10_000, 'the validation error');
    expect(textOf(await client.callTool({ name: 'fresh', arguments: { input: 'a' } }))).toBe('v2:a');

    // Fixed.
    const before = watch.listChanged;
    writeHatchery(dir, 'nested/new.json', echoDef('fresh', 'v4:'));
    await waitFor(() => watch.listChanged > before, 10_000, 'list_changed after the fix');
    expect(textOf(await client.callTool({ name: 'fresh', arguments: { input: 'a' } }))).toBe('v4:a');

    // Deleted.
    const beforeDelete = watch.listChanged;
    rmSync(file);
    await waitFor(() => watch.listChanged > beforeDelete, 10_000, 'list_changed after delete');
    expect(await names()).toEqual(['keep']);
    const gone = await client.callTool({ name: 'fresh', arguments: { input: 'a' } });
    expect(gone.isError).toBe(true);
  });

  it('refuses a second file with the same name, naming both, until the first goes away', async () => {
    const dir = hatcheryDir();
    const first = writeHatchery(dir, 'a.json', echoDef('dup', 'A:'));
    const { client, watch } = await setup(dir);
    const second = writeHatchery(dir, 'b.json', echoDef('dup', 'B:'));
    await waitFor(() => watch.logs.some((l) => l.includes('already used')), 10_000, 'the duplicate error');
    const msg = watch.logs.find((l) => l.includes('already used'))!;
    expect(msg).toContain(first);
    expect(msg).toContain(second);
    expect(textOf(await client.callTool({ name: 'dup', arguments: { input: 'x' } }))).toBe('A:x');
    rmSync(first);
    await waitFor(
      async () => textOf(await client.callTool({ name: 'dup', arguments: { input: 'x' } })) === 'B:x',
      10_000,
      'the second file to take over',
    );
  });

  it('reloads a parent when a hatch: sub-hatchery or a files entry outside the folder changes', async () => {
    const dir = hatcheryDir();
    const lib = tempDir('hatchery-lib-');
    const sub = writeHatchery(lib, 'sub.json', echoDef('sub', 'sub1:'));
    const data = path.join(lib, 'data.txt');
    writeFileSync(data, 'data1');
    writeHatchery(dir, 'parent.json', {
      name: 'parent',
      desc: 'calls sub',
      files: { data: path.relative(dir, data) },
      nodes: [
        {
          name: 'Call',
          type: 'tool',
          tool_name: `hatch:${path.relative(dir, sub)}`,
          tool_args: { input: '{{ ctx.input }}' },
          next: 'Add',
        },
        {
          name: 'Add',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: '{{ out.Call }}+{{ ctx.data }}' },
        },
      ],
    });
    const { client, watch } = await setup(dir, [lib]);
    expect(textOf(await client.callTool({ name: 'parent', arguments: { input: 'x' } }))).toBe('sub1:x+data1');
    writeHatchery(lib, 'sub.json', echoDef('sub', 'sub2:'));
    await waitFor(() => watch.logs.some((l) => /updated parent/.test(l)), 10_000, 'the parent reloaded');
    expect(watch.listChanged).toBeGreaterThan(0);
    expect(textOf(await client.callTool({ name: 'parent', arguments: { input: 'x' } }))).toBe('sub2:x+data1');
    const n = watch.logs.filter((l) => /updated parent/.test(l)).length;
    writeFileSync(data, 'data2');
    await waitFor(
      () => watch.logs.filter((l) => /updated parent/.test(l)).length > n,
      10_000,
      'reload after data',
    );
    expect(textOf(await client.callTool({ name: 'parent', arguments: { input: 'x' } }))).toBe('sub2:x+data2');
  });
});

describe('HatcheryRegistry', () => {
  it('keeps the last good version, reports each error once, and retries failed files', async () => {
    const dir = hatcheryDir();
    const a = writeHatchery(dir, 'a.json', echoDef('a'));
    const parent = writeHatchery(dir, 'p.json', {
      name: 'p',
      desc: 'needs q',
      nodes: [{ type: 'tool', tool_name: 'hatch:q.json', tool_args: { input: 'x' } }],
    });
    const reg = new HatcheryRegistry(dir);
    const first = await reg.loadAll();
    expect(first.added).toEqual(['a']);
    expect(first.problems.join('\n')).toContain(parent);
    writeFileSync(a, '{');
    const broken = await reg.refresh([a]);
    expect(broken.problems).toHaveLength(1);
    expect(reg.get('a')).toBeDefined();
    // Unrelated change: the failing files are retried silently.
    const other = writeHatchery(dir, 'q.json', echoDef('q'));
    const later = await reg.refresh([other]);
    expect(later.added.sort()).toEqual(['p', 'q']);
    expect(later.problems).toEqual([]);
    expect(reg.problems()).toHaveLength(1);
  });
});
