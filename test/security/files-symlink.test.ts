/**
 * Issue 8, "dangling symlinks": write_output and write_file through a dangling symlink created files
 * outside the allowed roots. Writes never follow a last-component link (dangling or not), and folders
 * are only made where their real path stays inside a write root.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { load, tempDir } from '../helpers.js';

/** A hatchery folder, a separate root (--allow-root: read and write) and a folder outside both. */
function layout() {
  const hatcheries = tempDir('files-link-h-');
  const root = tempDir('files-link-w-');
  const outside = tempDir('files-link-o-');
  return { hatcheries, root, outside };
}

/** Runs one write_file call the model asks for; returns what the tool answered. */
async function writeFileVia(
  hatcheries: string,
  root: string,
  args: Record<string, unknown>,
): Promise<string> {
  const h = load(
    { name: 'w', desc: 'd', model: 'openai:m', nodes: [{ usr_prompt: 'x', tools: ['write_file'] }] },
    hatcheries,
  );
  const model = new ScriptedProvider([
    { toolCalls: [{ name: 'write_file', args }] },
    (req) => String(req.messages.at(-1)?.content),
  ]);
  const runtime = new Runtime({ providers: { openai: model }, env: {}, allowRoots: [root], cwd: root });
  return (await runtime.run(h)).output;
}

/** Runs a node whose write_output is `target`; returns the error (or undefined when it wrote). */
async function writeOutputVia(hatcheries: string, root: string, target: string): Promise<unknown> {
  const h = load(
    {
      name: 'o',
      desc: 'd',
      nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'payload' }, write_output: target }],
    },
    hatcheries,
  );
  return new Runtime({ env: {}, allowRoots: [root], cwd: root }).run(h).then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('writes never go through a symlink', () => {
  it('write_file through a dangling link to a file outside is refused and creates nothing', async () => {
    const { hatcheries, root, outside } = layout();
    const target = path.join(outside, 'created.txt');
    symlinkSync(target, path.join(root, 'link.txt'));
    const seen = await writeFileVia(hatcheries, root, { path: path.join(root, 'link.txt'), content: 'x' });
    expect(seen).toContain('it is a symbolic link');
    expect(existsSync(target)).toBe(false);
    // Appending is no way around it.
    const again = await writeFileVia(hatcheries, root, {
      path: path.join(root, 'link.txt'),
      content: 'x',
      append: true,
    });
    expect(again).toContain('it is a symbolic link');
    expect(existsSync(target)).toBe(false);
  });

  it('write_output through a dangling link is refused and creates nothing', async () => {
    const { hatcheries, root, outside } = layout();
    const target = path.join(outside, 'created.txt');
    symlinkSync(target, path.join(root, 'out.log'));
    const err = await writeOutputVia(hatcheries, root, path.join(root, 'out.log'));
    expect(err).toMatchObject({ code: 'PATH_DENIED', context: { field: 'write_output' } });
    expect(existsSync(target)).toBe(false);
  });

  it('a link to an existing file, outside or even inside the root, is not written through', async () => {
    const { hatcheries, root, outside } = layout();
    writeFileSync(path.join(outside, 'victim.txt'), 'untouched');
    writeFileSync(path.join(root, 'real.txt'), 'untouched');
    symlinkSync(path.join(outside, 'victim.txt'), path.join(root, 'out.txt'));
    symlinkSync(path.join(root, 'real.txt'), path.join(root, 'in.txt'));
    const out = await writeFileVia(hatcheries, root, { path: path.join(root, 'out.txt'), content: 'evil' });
    expect(out).toContain('outside the write roots');
    const inside = await writeFileVia(hatcheries, root, { path: path.join(root, 'in.txt'), content: 'evil' });
    expect(inside).toContain('it is a symbolic link');
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('untouched');
    expect(readFileSync(path.join(root, 'real.txt'), 'utf8')).toBe('untouched');
  });

  it('a symlinked folder leading outside makes neither files nor folders there', async () => {
    const { hatcheries, root, outside } = layout();
    symlinkSync(outside, path.join(root, 'dirlink'));
    const seen = await writeFileVia(hatcheries, root, {
      path: path.join(root, 'dirlink/new/deep/x.txt'),
      content: 'x',
    });
    expect(seen).toContain('outside the write roots');
    const err = await writeOutputVia(hatcheries, root, path.join(root, 'dirlink/a.txt'));
    expect(err).toMatchObject({ code: 'PATH_DENIED' });
    expect(existsSync(path.join(outside, 'new'))).toBe(false);
    expect(existsSync(path.join(outside, 'a.txt'))).toBe(false);
  });

  it('still writes plain files, making folders, below the write root', async () => {
    const { hatcheries, root } = layout();
    mkdirSync(path.join(root, 'existing'));
    expect(await writeFileVia(hatcheries, root, { path: path.join(root, 'a/b/c.txt'), content: 'ok' })).toBe(
      `wrote 2 bytes to ${path.join(root, 'a/b/c.txt')}`,
    );
    expect(readFileSync(path.join(root, 'a/b/c.txt'), 'utf8')).toBe('ok');
    expect(await writeOutputVia(hatcheries, root, path.join(root, 'existing/log.txt'))).toBeUndefined();
    expect(await writeOutputVia(hatcheries, root, path.join(root, 'existing/log.txt'))).toBeUndefined();
    expect(readFileSync(path.join(root, 'existing/log.txt'), 'utf8')).toBe('payload\npayload\n');
  });
});
