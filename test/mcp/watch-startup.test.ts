import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echoDef, hatcheryDir, writeHatchery } from './helpers.js';

// The server answers clients before chokidar's initial scan is done: these edits land in that window.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function start(dir: string): Promise<{ core: HatcheryMcpServer; logs: string[] }> {
  const runtime = new Runtime({ env: {} });
  const logs: string[] = [];
  const core = await HatcheryMcpServer.start({ dir, runtime, debounceMs: 30, log: (l) => logs.push(l) });
  cleanups.push(async () => {
    await core.close();
    await runtime.close();
  });
  return { core, logs };
}

const served = (core: HatcheryMcpServer) =>
  core.registry
    .entries()
    .map((e) => e.name)
    .sort();

describe('watching starts while the server already answers', () => {
  it('picks up files edited, deleted and added right after start, before the watcher scanned them', async () => {
    const dir = hatcheryDir();
    for (let i = 0; i < 40; i++) writeHatchery(dir, `sub${i % 8}/h${i}.json`, echoDef(`h${i}`));
    const { core } = await start(dir);
    expect(served(core)).toHaveLength(40);
    // Synchronously after start: the watcher has not finished (or begun) its scan.
    writeHatchery(dir, 'sub0/h0.json', echoDef('h0', 'v2:', { desc: 'edited after start' }));
    rmSync(path.join(dir, 'sub1/h1.json'));
    writeHatchery(dir, 'sub2/added.json', echoDef('added'));
    await core.idle();
    const names = served(core);
    expect(names).toContain('added');
    expect(names).not.toContain('h1');
    expect(names).toHaveLength(40);
    expect(core.registry.get('h0')!.tool.description).toContain('edited after start');

    // And the watcher runs from then on.
    writeHatchery(dir, 'sub3/later.json', echoDef('later'));
    const until = Date.now() + 10_000;
    while (!core.registry.get('later') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(core.registry.get('later')).toBeDefined();
  });

  it('does not reload or report again files written just before start and untouched since', async () => {
    const dir = hatcheryDir();
    for (let i = 0; i < 10; i++) writeHatchery(dir, `h${i}.json`, echoDef(`h${i}`));
    writeFileSync(path.join(dir, 'broken.json'), '{ "name": "broken", ');
    const { core, logs } = await start(dir);
    await core.idle();
    // Give a spurious catch-up batch the time to run.
    await new Promise((r) => setTimeout(r, 200));
    await core.idle();
    expect(served(core)).toHaveLength(10);
    expect(logs.filter((l) => l.includes('reloaded'))).toEqual([]);
    expect(logs.filter((l) => l.includes('broken.json'))).toHaveLength(1);
  });
});
