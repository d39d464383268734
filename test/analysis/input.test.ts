import { afterEach, describe, expect, it } from 'vitest';
import { echo, hatch, tempDir } from '../helpers.js';
import { inMemory, writeHatchery } from '../mcp/helpers.js';
import { loaded } from './helpers.js';

describe('input required', () => {
  it('is true when a template on a path from start reads ctx.input without a default', () => {
    expect(loaded(hatch([echo('A', 'about {{ ctx.input }}')])).inputRequired).toBe(true);
    // On one path only: the run can still fail without it.
    expect(
      loaded(
        hatch([
          echo('S', 'x', { next: ['Saver', 'U'] }),
          echo('Saver', 'y', { next: 'U' }),
          echo('U', '{{ ctx.input }}'),
        ]),
      ).inputRequired,
    ).toBe(true);
  });

  it('is false with a default or a guard, when nothing reads it, or when only a node: tool chain reads it', () => {
    for (const text of [
      '{{ ctx.input | default("hi") }}',
      '{% if ctx.input %}{{ ctx.input }}{% endif %}',
      'fixed',
    ])
      expect(loaded(hatch([echo('A', text)])).inputRequired, text).toBe(false);
    expect(
      loaded(
        hatch([{ name: 'Ask', usr_prompt: 'go', tools: ['node:Look'] }, echo('Look', '{{ ctx.input }}')]),
      ).inputRequired,
    ).toBe(false);
    // A node that saves "input" before it is read provides it.
    expect(
      loaded(hatch([echo('A', 'x', { save_output: 'input', next: 'B' }), echo('B', '{{ ctx.input }}')]))
        .inputRequired,
    ).toBe(false);
  });

  it('is true for a script node at the start with no stdin of its own (it reads the input)', () => {
    expect(loaded(hatch([{ name: 'S', type: 'script', cmd: ['cat'] }])).inputRequired).toBe(true);
    expect(loaded(hatch([{ name: 'S', type: 'script', cmd: ['cat'], stdin: 'fixed' }])).inputRequired).toBe(
      false,
    );
  });

  describe('over MCP', () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });

    it('the tool schema marks input required exactly when the hatchery needs it', async () => {
      const dir = tempDir();
      writeHatchery(dir, 'needs.json', { ...hatch([echo('A', '{{ ctx.input }}')]), name: 'needs' });
      writeHatchery(dir, 'optional.json', {
        ...hatch([echo('A', '{{ ctx.input | default("x") }}')]),
        name: 'optional',
      });
      const s = await inMemory(dir);
      close = s.close;
      const { tools } = await s.client.listTools();
      const needs = tools.find((t) => t.name === 'needs')!;
      const optional = tools.find((t) => t.name === 'optional')!;
      expect(needs.inputSchema.required).toEqual(['input']);
      expect(optional.inputSchema.required).toBeUndefined();
      const res = await s.client.callTool({ name: 'optional', arguments: {} });
      expect(res.isError ?? false).toBe(false);
    });
  });
});
