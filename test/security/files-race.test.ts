/**
 * Issue 8, the read race: a file swapped for a symlink between the path check and the read leaked
 * the outside file (52 of 3,000 read_file and 8 of 3,000 fread calls). Reads now open first and check
 * the real path of the opened file. A separate process swaps the file as fast as it can while the
 * runtime reads it thousands of times; the outside content must never appear.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hatchery } from '../../src/engine/contracts.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echoNode, load, tempDir } from '../helpers.js';

const SECRET = 'TOP-SECRET-OUTSIDE';
/** Reads per attack; bounded by time too, so a slow machine still finishes in a few seconds. */
const READS = 3000;
const BUDGET_MS = 4000;

let swapper: ChildProcess | undefined;
afterEach(() => {
  swapper?.kill('SIGKILL');
  swapper = undefined;
});

/** Starts a process that keeps replacing `<dir>/<name>` by a symlink to the secret and back. */
async function startSwapper(
  dir: string,
  secretFile: string,
  name = 'data.txt',
  inside = 'inside',
): Promise<void> {
  // Both states cost the same (make an entry, rename it over data.txt), so reads meet each often.
  const code = `
    const fs = require('node:fs');
    const [dir, secret, name, inside] = process.argv.slice(1);
    const data = dir + '/' + name, link = dir + '/.link', file = dir + '/.file', master = dir + '/.master';
    fs.writeFileSync(master, inside);
    process.stdout.write('ready\\n');
    for (;;) {
      fs.symlinkSync(secret, link);
      fs.renameSync(link, data);
      fs.linkSync(master, file);
      fs.renameSync(file, data);
    }`;
  await startProcess(code, dir, secretFile, name, inside);
}

/** Starts `code` in a separate Node process and waits until it says it is ready. */
async function startProcess(code: string, ...args: string[]): Promise<void> {
  const child = spawn(process.execPath, ['-e', code, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  swapper = child;
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (c) => reject(new Error(`swapper exited with ${c}`)));
  });
}

/** Runs `h` again and again while the swapper works; returns how many runs saw the inside text. */
async function hammer(runtime: Runtime, h: Hatchery): Promise<{ ok: number; leaked: string[] }> {
  let ok = 0;
  const leaked: string[] = [];
  const t0 = Date.now();
  for (let i = 0; i < READS && Date.now() - t0 < BUDGET_MS; i++) {
    let text: string;
    try {
      text = (await runtime.run(h)).output;
    } catch (err) {
      // A refusal (the opened file was the link) is the right outcome; the text is checked anyway.
      text = String((err as Error).message);
    }
    if (text.includes(SECRET)) leaked.push(text);
    else if (text.includes('inside')) ok++;
  }
  return { ok, leaked };
}

function setup() {
  const dir = tempDir('files-race-');
  const outside = tempDir('files-race-out-');
  const secretFile = path.join(outside, 'secret.txt');
  writeFileSync(secretFile, SECRET);
  writeFileSync(path.join(dir, 'data.txt'), 'inside');
  return { dir, secretFile };
}

describe('a file swapped for a symlink while it is read never leaks the outside file', () => {
  it('read_file', async () => {
    const { dir, secretFile } = setup();
    const h = load(
      {
        name: 'r',
        desc: 'd',
        nodes: [{ type: 'tool', tool_name: 'read_file', tool_args: { path: 'data.txt' } }],
      },
      dir,
    );
    await startSwapper(dir, secretFile);
    const { ok, leaked } = await hammer(new Runtime({ env: {} }), h);
    expect(leaked).toEqual([]);
    expect(ok).toBeGreaterThan(0);
  });

  it('fread', async () => {
    const { dir, secretFile } = setup();
    const h = load({ name: 'f', desc: 'd', nodes: [echoNode("{{ fread('data.txt') }}")] }, dir);
    await startSwapper(dir, secretFile);
    const { ok, leaked } = await hammer(new Runtime({ env: {} }), h);
    expect(leaked).toEqual([]);
    expect(ok).toBeGreaterThan(0);
  });

  it('files entries', async () => {
    const { dir, secretFile } = setup();
    const h = load(
      { name: 'e', desc: 'd', files: { doc: 'data.txt' }, nodes: [echoNode('{{ ctx.doc }}')] },
      dir,
    );
    await startSwapper(dir, secretFile);
    const { ok, leaked } = await hammer(new Runtime({ env: {} }), h);
    expect(leaked).toEqual([]);
    expect(ok).toBeGreaterThan(0);
  });
});

describe('a hatch: file swapped for a symlink to an outside hatchery never runs it', () => {
  it('hatch:', async () => {
    const dir = tempDir('files-race-');
    const outside = tempDir('files-race-out-');
    const def = (name: string, text: string) =>
      JSON.stringify({ name, desc: 'd', nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text } }] });
    const evil = path.join(outside, 'evil.json');
    writeFileSync(evil, def('sub', SECRET));
    writeFileSync(path.join(dir, 'sub.json'), def('sub', 'inside'));
    const h = load(
      {
        name: 'c',
        desc: 'd',
        nodes: [{ type: 'tool', tool_name: 'hatch:sub.json', tool_args: { input: 'x' } }],
      },
      dir,
    );
    await startSwapper(dir, evil, 'sub.json', def('sub', 'inside'));
    const { ok, leaked } = await hammer(new Runtime({ env: {} }), h);
    expect(leaked).toEqual([]);
    expect(ok).toBeGreaterThan(0);
  });
});

describe('a folder swapped for a symlink while it is listed never shows the outside folder', () => {
  it('list_dir', async () => {
    const dir = tempDir('files-race-');
    const outside = tempDir('files-race-out-');
    writeFileSync(path.join(outside, `${SECRET}.txt`), '');
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'sub', 'inside.txt'), '');
    const code = `
      const fs = require('node:fs');
      const [dir, outside] = process.argv.slice(1);
      const sub = dir + '/sub', hold = dir + '/.hold', link = dir + '/.link';
      process.stdout.write('ready\\n');
      for (;;) {
        fs.renameSync(sub, hold);
        fs.symlinkSync(outside, link);
        fs.renameSync(link, sub);
        fs.unlinkSync(sub);
        fs.renameSync(hold, sub);
      }`;
    await startProcess(code, dir, outside);
    const h = load(
      { name: 'l', desc: 'd', nodes: [{ type: 'tool', tool_name: 'list_dir', tool_args: { path: 'sub' } }] },
      dir,
    );
    const { ok, leaked } = await hammer(new Runtime({ env: {} }), h);
    expect(leaked).toEqual([]);
    expect(ok).toBeGreaterThan(0);
  });
});
