/**
 * A file of 10,000 nodes loads, is served and runs (issue 15: load time linear in node count; the
 * timing itself is bench/load-scale.ts, never asserted here).
 */
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { inMemory, textOf, writeHatchery } from '../mcp/helpers.js';

/** A chain of `blocks` blocks: a parallel of two echo branches, then a node reading what they made. */
function bigFile(blocks: number): Record<string, unknown> {
  const nodes: Record<string, unknown>[] = [];
  for (let k = 0; k < blocks; k++) {
    const prev = k === 0 ? '{{ ctx.input }}' : `{{ ctx.s${k - 1} }}`;
    nodes.push(
      { name: `P${k}`, type: 'parallel', branches: [`A${k}`, `B${k}`], next: `C${k}` },
      { name: `A${k}`, type: 'tool', tool_name: 'echo', tool_args: { text: `a${k}` } },
      { name: `B${k}`, type: 'tool', tool_name: 'echo', tool_args: { text: `b${k}` } },
      {
        name: `C${k}`,
        type: 'tool',
        tool_name: 'echo',
        tool_args: { text: `${k}` },
        save_output: `s${k}`,
        next: `D${k}`,
      },
      {
        name: `D${k}`,
        type: 'tool',
        tool_name: 'echo',
        tool_args: { text: `{% if ctx.s${k} %}${prev}+{{ out.C${k} }}{% endif %}` },
        ...(k + 1 < blocks ? { next: `P${k + 1}` } : {}),
      },
    );
  }
  return { name: 'big', desc: 'ten thousand nodes', max_steps: 20_000, nodes };
}

describe('a 10,000-node file', () => {
  it('loads, is listed with its tool definition, and runs to its last node', async () => {
    const dir = tempDir();
    writeHatchery(dir, 'big.json', bigFile(2_000));
    const s = await inMemory(dir, { server: { genericTools: false } });
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['big']);
      const tool = tools[0]!;
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(tool.inputSchema.required).toEqual(['input']);
      const r = await s.client.callTool({ name: 'big', arguments: { input: 'x' } });
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toContain('1998+1999');
    } finally {
      await s.close();
    }
  }, 120_000);
});
