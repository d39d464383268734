import { describe, expect, it } from 'vitest';
import { echoDef, hatcheryDir, jsonOf, spawnCli, textOf, writeHatchery } from './helpers.js';

// The server loads its call handling on the first call, or in the background once the first
// tools/list is answered; a client that calls or reads before it ever lists must not notice.
describe('call handling loaded on first use', () => {
  it('answers calls, generic tools and flowchart reads of a client that never listed the tools', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('echo', 'got: '));
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      // Several at once: they all wait for the same first load.
      const [a, b, listed] = await Promise.all([
        cli.client.callTool({ name: 'echo', arguments: { input: 'one' } }),
        cli.client.callTool({ name: 'echo', arguments: { input: 'two' } }),
        cli.client.callTool({ name: 'hatchery_list', arguments: {} }),
      ]);
      expect(textOf(a)).toBe('got: one');
      expect(textOf(b)).toBe('got: two');
      expect(JSON.stringify(jsonOf(listed))).toContain('"echo"');
      const unknown = await cli.client.callTool({ name: 'ecoh', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain('did you mean "echo"');
      const graph = await cli.client.readResource({ uri: 'hatchery-graph://echo' });
      const [content] = graph.contents;
      expect(content && 'text' in content ? content.text : '').toContain('flowchart');
    } finally {
      await cli.close();
    }
  }, 30_000);
});
