/**
 * Issue 8: `hatch:` loaded hatchery files from anywhere, outside the allowed roots, and ran them.
 * A hatch: target is confined to the read roots like every other path.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { load, tempDir } from '../helpers.js';

/** A hatchery outside the caller's roots (e.g. planted in a shared temp folder). */
function outsideHatchery(): { dir: string; rel: (from: string) => string } {
  const dir = tempDir('files-hatch-out-');
  writeFileSync(
    path.join(dir, 'evil.json'),
    JSON.stringify({
      name: 'evil',
      desc: 'runs code from elsewhere',
      nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'evil ran' } }],
    }),
  );
  return { dir, rel: (from) => path.relative(from, path.join(dir, 'evil.json')) };
}

describe('hatch: stays inside the read roots', () => {
  it('refuses a hatch: tool of a drone outside the roots before the model is asked', async () => {
    const outside = outsideHatchery();
    const dir = tempDir('files-hatch-');
    const ref = `hatch:${outside.rel(dir)}`;
    const h = load(
      { name: 'm', desc: 'd', model: 'openai:m', nodes: [{ usr_prompt: 'x', tools: [ref] }] },
      dir,
    );
    const model = new ScriptedProvider([{ toolCalls: [{ name: 'evil', args: { input: 'x' } }] }, 'done']);
    const err = await new Runtime({ providers: { openai: model }, env: {}, cwd: dir })
      .run(h)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PATH_DENIED', context: { tool: ref } });
    expect((err as Error).message).toContain(`"${ref}"`);
    expect((err as Error).message).toContain('--allow-root DIR');
    expect(model.calls).toHaveLength(0);
  });

  it('refuses it as a baneling tool, and an absolute path too', async () => {
    const outside = outsideHatchery();
    const dir = tempDir('files-hatch-');
    for (const target of [outside.rel(dir), path.join(outside.dir, 'evil.json')]) {
      const h = load(
        {
          name: 'b',
          desc: 'd',
          nodes: [{ type: 'tool', tool_name: `hatch:${target}`, tool_args: { input: 'x' } }],
        },
        dir,
      );
      await expect(new Runtime({ env: {}, cwd: dir }).run(h)).rejects.toMatchObject({ code: 'PATH_DENIED' });
    }
  });

  it('runs it once its folder is an --allow-root', async () => {
    const outside = outsideHatchery();
    const dir = tempDir('files-hatch-');
    const h = load(
      {
        name: 'b',
        desc: 'd',
        nodes: [{ type: 'tool', tool_name: `hatch:${outside.rel(dir)}`, tool_args: { input: 'x' } }],
      },
      dir,
    );
    const res = await new Runtime({ env: {}, cwd: dir, allowRoots: [outside.dir] }).run(h);
    expect(res.output).toBe('evil ran');
  });
});
