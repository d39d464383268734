import { parseMermaid } from 'beautiful-mermaid';
import { afterEach, describe, expect, it } from 'vitest';
import { echo } from '../helpers.js';
import { echoDef, hatcheryDir, inMemory, waitFor, writeHatchery } from '../mcp/helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('the flowchart of each hatchery as an MCP resource', () => {
  it('is listed as hatchery-graph://<name> (text/vnd.mermaid), readable, and follows hot reload', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'shout.json', echoDef('shout'));
    const s = await inMemory(dir);
    cleanups.push(s.close);

    const { resources } = await s.client.listResources();
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: 'hatchery-graph://shout', mimeType: 'text/vnd.mermaid' }),
    );
    const read = await s.client.readResource({ uri: 'hatchery-graph://shout' });
    const first = read.contents[0] as { uri: string; mimeType: string; text: string };
    expect(first).toMatchObject({ uri: 'hatchery-graph://shout', mimeType: 'text/vnd.mermaid' });
    expect(first.text).toMatch(/^flowchart TD\n/);
    expect(first.text).toContain('  n_Echo[["Echo<br/>tool"]]');
    expect([...parseMermaid(first.text).nodes.keys()]).toContain('n_Echo');

    // An edit adds a node: the resource shows it; a new file gets its own resource.
    writeHatchery(dir, 'shout.json', {
      ...echoDef('shout'),
      nodes: [echo('Echo', '{{ ctx.input }}', { next: 'Again' }), echo('Again', 'again')],
    });
    writeHatchery(dir, 'more.json', echoDef('more'));
    const text = await waitFor(async () => {
      const r = await s.client.readResource({ uri: 'hatchery-graph://shout' });
      const t = (r.contents[0] as { text: string }).text;
      return t.includes('n_Echo --> n_Again') ? t : undefined;
    });
    expect(text).toContain('  n_Again[["Again<br/>tool"]]');
    await waitFor(async () =>
      (await s.client.listResources()).resources.some((r) => r.uri === 'hatchery-graph://more'),
    );
    await expect(s.client.readResource({ uri: 'hatchery-graph://nothing' })).rejects.toThrow(
      /no hatchery resource/,
    );
  });
});
