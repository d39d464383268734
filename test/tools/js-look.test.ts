import { mkdirSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { Hatchery } from '../../src/engine/contracts.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

/**
 * Every run checks a js: module's path against the roots and stamps its file again, so each change
 * is seen by the next run: links and folders swapped to lead outside, edits that keep the size and set the
 * modification time back, files replaced.
 */
const version = (v: string) => `
export const verSchema = { type: 'object', properties: { text: { type: 'string' } } };
export function ver(args) { return '${v}:' + (args.text ?? ''); }
`;

const runtime = () => new Runtime({ providers: { openai: new ScriptedProvider(() => 'ok') }, env: {} });

/** Runs `h` three times and expects `out` each time. */
async function settle(rt: Runtime, h: Hatchery, out: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await rt.run(h)).output).toBe(out);
}

async function denied(rt: Runtime, h: Hatchery): Promise<HatcheryError> {
  return (await rt.run(h).catch((e: unknown) => e)) as HatcheryError;
}

describe('a run sees every change to a js: module', () => {
  it('a link swapped to a file outside the roots is refused by the next run', async () => {
    const dir = tempDir();
    const outside = tempDir();
    writeFileSync(path.join(dir, 'real.mjs'), version('inside'));
    writeFileSync(path.join(outside, 'evil.mjs'), version('outside'));
    const link = path.join(dir, 'tool.mjs');
    symlinkSync(path.join(dir, 'real.mjs'), link);
    const h = load(hatch([{ type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: 'a' } }]), dir);
    const rt = runtime();
    await settle(rt, h, 'inside:a');
    const tmp = path.join(dir, 'tool.tmp');
    symlinkSync(path.join(outside, 'evil.mjs'), tmp);
    renameSync(tmp, link);
    expect((await denied(rt, h)).code).toBe('PATH_DENIED');
    // Swapped back, the file inside is served again.
    symlinkSync(path.join(dir, 'real.mjs'), tmp);
    renameSync(tmp, link);
    await settle(rt, h, 'inside:a');
  });

  it('a folder of the path swapped for a link to a folder outside is refused by the next run', async () => {
    const dir = tempDir();
    const outside = tempDir();
    mkdirSync(path.join(dir, 'real'));
    writeFileSync(path.join(dir, 'real', 'tool.mjs'), version('inside'));
    writeFileSync(path.join(outside, 'tool.mjs'), version('inside'));
    symlinkSync(path.join(dir, 'real'), path.join(dir, 'lib'));
    const h = load(
      hatch([{ type: 'tool', tool_name: 'js:lib/tool.mjs#ver', tool_args: { text: 'a' } }]),
      dir,
    );
    const rt = runtime();
    await settle(rt, h, 'inside:a');
    // The same content, even the same times: another file all the same, outside the roots.
    const t = new Date(Date.now() - 60_000);
    utimesSync(path.join(outside, 'tool.mjs'), t, t);
    utimesSync(path.join(dir, 'real', 'tool.mjs'), t, t);
    const tmp = path.join(dir, 'lib.tmp');
    symlinkSync(outside, tmp);
    renameSync(tmp, path.join(dir, 'lib'));
    expect((await denied(rt, h)).code).toBe('PATH_DENIED');
  });

  it('an edit that keeps the size and sets the modification time back is picked up by the next run', async () => {
    const dir = tempDir();
    const mod = path.join(dir, 'tool.mjs');
    writeFileSync(mod, version('v1'));
    const t = new Date(Date.now() - 60_000);
    utimesSync(mod, t, t);
    const h = load(hatch([{ type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: 'a' } }]), dir);
    const rt = runtime();
    await settle(rt, h, 'v1:a');
    writeFileSync(mod, version('v2'));
    utimesSync(mod, t, t);
    expect((await rt.run(h)).output).toBe('v2:a');
  });

  it('a file replaced by another (renamed over it) is picked up by the next run', async () => {
    const dir = tempDir();
    const mod = path.join(dir, 'tool.mjs');
    writeFileSync(mod, version('v1'));
    const h = load(hatch([{ type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: 'a' } }]), dir);
    const rt = runtime();
    await settle(rt, h, 'v1:a');
    writeFileSync(path.join(dir, 'next.tmp'), version('v3'));
    renameSync(path.join(dir, 'next.tmp'), mod);
    expect((await rt.run(h)).output).toBe('v3:a');
    // A removed module fails the next run with NOT_FOUND, naming the tool.
    renameSync(mod, path.join(dir, 'gone.tmp'));
    const err = await denied(rt, h);
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toContain('js:tool.mjs#ver');
  });
});
