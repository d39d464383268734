import { utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_JS_MODULE_VERSIONS } from '../../src/tools/js.js';
import { hatcheryDir, inMemory, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Module text of version `v`: its tool answers "v<v>:<text>". */
const moduleText = (v: number) =>
  `export const verSchema = { type: 'object', properties: { text: { type: 'string' } } };\nexport function ver(args) { return 'v${v}:' + args.text; }\n`;

describe('js: module hot reload is bounded', () => {
  it(`imports at most ${MAX_JS_MODULE_VERSIONS} versions of a module, then logs and keeps the last one`, async () => {
    const dir = hatcheryDir();
    const mod = path.join(dir, 'tool.mjs');
    writeFileSync(mod, moduleText(1));
    writeHatchery(dir, 'ver.json', {
      name: 'ver',
      desc: 'asks the js: tool',
      nodes: [{ type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: '{{ ctx.input }}' } }],
    });
    const s = await inMemory(dir);
    cleanups.push(s.close);
    const call = async () => textOf(await s.client.callTool({ name: 'ver', arguments: { input: 'a' } }));
    let t = Date.now();
    const edit = (v: number) => {
      writeFileSync(mod, moduleText(v));
      t += 2000;
      utimesSync(mod, new Date(t), new Date(t));
    };
    expect(await call()).toBe('v1:a');
    for (let v = 2; v <= MAX_JS_MODULE_VERSIONS; v++) {
      edit(v);
      expect(await call()).toBe(`v${v}:a`);
    }
    expect(s.watch.logs.join('\n')).not.toMatch(/restart the server/);

    // One version more would stay in memory for good: the last version keeps serving.
    edit(MAX_JS_MODULE_VERSIONS + 1);
    expect(await call()).toBe(`v${MAX_JS_MODULE_VERSIONS}:a`);
    const notice = await waitFor(
      () => s.watch.logs.find((l) => l.includes('restart the server')),
      10_000,
      'the reload limit notice',
    );
    expect(notice).toBe(
      `js:tool.mjs: ${MAX_JS_MODULE_VERSIONS} versions of ${mod} were loaded since the server started and Node keeps each in memory, so this edit and later ones are not loaded: restart the server to load further edits of ${mod}`,
    );

    // A content seen before reuses its first import: no new version, so it is served.
    edit(5);
    expect(await call()).toBe('v5:a');
    edit(MAX_JS_MODULE_VERSIONS + 2);
    expect(await call()).toBe('v5:a');
    expect(s.watch.logs.filter((l) => l.includes('restart the server'))).toHaveLength(1);
  }, 60_000);
});
