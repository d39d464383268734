/**
 * The MCP server journals its runs beside the served folder, never inside it, and a `.hatchery`
 * folder inside a served folder is never served.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { echoDef, spawnCli, writeHatchery } from '../mcp/helpers.js';

describe('hatchery-mcp serve --dir X', () => {
  it('journals runs in <parent of X>/.hatchery/runs and ignores X/.hatchery', async () => {
    const root = tempDir('hatchery-serve-journal-');
    const served = path.join(root, 'flows');
    writeHatchery(served, 'greet.json', echoDef('greet', 'hi '));
    // A hatchery planted where a journal folder would be is not a tool.
    writeHatchery(served, '.hatchery/runs/planted.json', echoDef('planted'));
    const s = await spawnCli(served, { env: { HATCHERY_STATE: '' } });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('greet');
      expect(names).not.toContain('planted');
      const res = await s.client.callTool({ name: 'greet', arguments: { input: 'Ada' } });
      expect(JSON.stringify(res.content)).toContain('hi Ada');
    } finally {
      await s.close();
    }
    const state = path.join(root, '.hatchery', 'runs');
    const files = readdirSync(state).filter((n) => n.endsWith('.jsonl'));
    expect(files).toHaveLength(1);
    expect(readdirSync(path.join(served, '.hatchery', 'runs'))).toEqual(['planted.json']);
    expect(existsSync(path.join(served, '.hatchery', 'runs', files[0]!))).toBe(false);
  });
});
