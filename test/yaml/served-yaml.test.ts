/** YAML files are hatcheries of a served folder too: runs may never write one there (issue 8's planted tool). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadHatchery } from '../../src/loader/load.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { writeHatchery } from '../mcp/helpers.js';

describe('a served folder with --allow-write', () => {
  it('takes other files but never a .yaml, .yml or .JSON hatchery', async () => {
    const project = tempDir('yaml-plant-');
    const served = path.join(project, 'served');
    writeHatchery(
      served,
      'a.yaml',
      'name: a\ndesc: d\nnodes: [{type: tool, tool_name: echo, tool_args: {text: x}}]\n',
    );
    const file = writeHatchery(path.join(project, 'flows'), 'w.yaml', {
      name: 'w',
      desc: 'd',
      nodes: [
        {
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: 'nodes: []' },
          write_output: '../served/{{ ctx.input }}',
        },
      ],
    });
    const h = await loadHatchery(file);
    const opened = new Runtime({ env: {}, cwd: project, protectedDirs: [served], allowWrite: [served] });
    await opened.run(h, { input: 'notes.txt' });
    expect(existsSync(path.join(served, 'notes.txt'))).toBe(true);
    for (const target of ['planted.yaml', 'sub/planted.yml', 'planted.YAML', 'planted.JSON']) {
      await expect(opened.run(h, { input: target })).rejects.toMatchObject({ code: 'PATH_DENIED' });
      expect(existsSync(path.join(served, target))).toBe(false);
    }
    await opened.close();
  });
});
