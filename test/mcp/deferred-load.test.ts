import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { echoDef, hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from './helpers.js';

// `serve` answers the first tools/list once each file is parsed and validated; templates, node
// kinds, tool references and the whole-file analysis follow on a tool's first call or in the
// background. These tests hold what a client sees of that: nothing runs before its file is fully
// loaded, and a file that fails late is withdrawn like a file broken on disk.

/** An echo tool whose template reads the output of a node the file does not have. */
function lateFailure(name: string): Record<string, unknown> {
  return {
    name,
    desc: 'reads a node that does not exist',
    nodes: [{ name: 'Echo', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ out.Nope }}' } }],
  };
}

describe('deferred load at start (serve)', () => {
  it('answers a call sent right after the first list, before the background load is done', async () => {
    const dir = hatcheryDir();
    // Enough files that the background completion is still going when the calls arrive.
    for (let i = 0; i < 300; i++) writeHatchery(dir, `e_${i}.json`, echoDef(`e_${i}`, `${i}: `));
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      const { tools } = await cli.client.listTools();
      expect(tools.filter((t) => t.name.startsWith('e_'))).toHaveLength(300);
      const e299 = tools.find((t) => t.name === 'e_299');
      expect(e299?.inputSchema.required).toEqual(['input']);
      const [last, first] = await Promise.all([
        cli.client.callTool({ name: 'e_299', arguments: { input: 'late' } }),
        cli.client.callTool({ name: 'e_0', arguments: { input: 'early' } }),
      ]);
      expect(textOf(last)).toBe('299: late');
      expect(textOf(first)).toBe('0: early');
      // No file failed, so the tools were never sent again.
      await new Promise((r) => setTimeout(r, 300));
      expect(cli.watch.listChanged).toBe(0);
    } finally {
      await cli.close();
    }
  }, 30_000);

  it('never runs a file that fails the full load: the call gets its problems, the tool is withdrawn', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('echo', 'got: '));
    const bad = writeHatchery(dir, 'bad.json', lateFailure('bad'));
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      const first = await cli.client.listTools();
      const listedAtFirst = first.tools.some((t) => t.name === 'bad');
      const r = await cli.client.callTool({ name: 'bad', arguments: { input: 'x' } });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(bad);
      expect(textOf(r)).toContain('names no node');
      // Withdrawn: gone from the list, and clients that saw it were told.
      const after = await cli.client.listTools();
      expect(after.tools.map((t) => t.name)).not.toContain('bad');
      expect(after.tools.map((t) => t.name)).toContain('echo');
      if (listedAtFirst) await waitFor(() => cli.watch.listChanged > 0, 10_000, 'list_changed');
      // The error is logged as for any broken file.
      await waitFor(() => cli.stderr().includes('names no node'), 10_000, 'the load error on stderr');
      expect(cli.stderr()).toContain(bad);
      // Asking again gives the same error, not an unknown tool.
      const again = await cli.client.callTool({ name: 'bad', arguments: { input: 'x' } });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toContain('names no node');
      expect(textOf(await cli.client.callTool({ name: 'echo', arguments: { input: 'ok' } }))).toBe('got: ok');
    } finally {
      await cli.close();
    }
  }, 30_000);

  it('withdraws a late failure found in the background, without any call', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('echo'));
    writeHatchery(dir, 'bad.json', lateFailure('bad'));
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      await cli.client.listTools();
      await waitFor(
        async () => !(await cli.client.listTools()).tools.some((t) => t.name === 'bad'),
        10_000,
        'bad withdrawn',
      );
      await waitFor(() => cli.stderr().includes('names no node'), 10_000, 'the load error on stderr');
    } finally {
      await cli.close();
    }
  }, 30_000);

  it('never lists a file broken at parse or schema level, and logs its error', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('echo'));
    writeHatchery(dir, 'syntax.json', '{ "name": "syntax", "desc": "x", "nodes": [ oops ] }');
    writeHatchery(dir, 'schema.json', {
      ...echoDef('schema'),
      nodes: [{ name: 'A', usr_prompt: 'x', next: 'Nope' }],
    });
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      const names = (await cli.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('echo');
      expect(names).not.toContain('syntax');
      expect(names).not.toContain('schema');
      await waitFor(() => cli.stderr().includes('schema.json'), 10_000, 'the schema error on stderr');
      expect(cli.stderr()).toContain('syntax.json');
      expect(cli.stderr()).toContain('no node named "Nope"');
      const r = await cli.client.callTool({ name: 'schema', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('unknown tool');
      expect(cli.watch.listChanged).toBe(0);
    } finally {
      await cli.close();
    }
  }, 30_000);

  it('sends the tool again when the analysis disagrees with the first guess of required input', async () => {
    const dir = hatcheryDir();
    // ctx.input is read, but only after a node saved an output named "input": not required.
    writeHatchery(dir, 'saves.json', {
      name: 'saves',
      desc: 'saves its input first',
      nodes: [
        {
          name: 'A',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: 'fixed' },
          save_output: 'input',
          next: 'B',
        },
        { name: 'B', type: 'tool', tool_name: 'echo', tool_args: { text: 'got {{ ctx.input }}' } },
      ],
    });
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      const first = (await cli.client.listTools()).tools.find((t) => t.name === 'saves');
      expect(first).toBeDefined();
      const tool = await waitFor(async () => {
        const t = (await cli.client.listTools()).tools.find((x) => x.name === 'saves');
        return t && t.inputSchema.required === undefined ? t : undefined;
      });
      expect(tool.name).toBe('saves');
      if (first?.inputSchema.required) await waitFor(() => cli.watch.listChanged > 0, 10_000, 'list_changed');
      expect(textOf(await cli.client.callTool({ name: 'saves', arguments: {} }))).toBe('got fixed');
    } finally {
      await cli.close();
    }
  }, 30_000);

  it('reloads edited and added files after a deferred start', async () => {
    const dir = hatcheryDir();
    const file = writeHatchery(dir, 'echo.json', echoDef('echo', 'v1: '));
    for (let i = 0; i < 50; i++) writeHatchery(dir, `e_${i}.json`, echoDef(`e_${i}`));
    const cli = await spawnCli(dir, { args: ['--no-journal'] });
    try {
      await cli.client.listTools();
      expect(textOf(await cli.client.callTool({ name: 'echo', arguments: { input: 'a' } }))).toBe('v1: a');
      writeFileSync(file, JSON.stringify(echoDef('echo', 'v2: ')));
      writeHatchery(dir, 'added.json', echoDef('added', 'new: '));
      await waitFor(
        async () => (await cli.client.listTools()).tools.some((t) => t.name === 'added'),
        15_000,
        'the added file listed',
      );
      await waitFor(
        async () =>
          textOf(await cli.client.callTool({ name: 'echo', arguments: { input: 'a' } })) === 'v2: a',
        15_000,
        'the edit picked up',
      );
      expect(textOf(await cli.client.callTool({ name: 'added', arguments: { input: 'b' } }))).toBe('new: b');
      // A late failure written after the start is a broken edit as before: not served.
      writeHatchery(dir, 'late.json', lateFailure('late'));
      await waitFor(() => cli.stderr().includes('late.json'), 15_000, 'the broken file reported');
      expect((await cli.client.listTools()).tools.map((t) => t.name)).not.toContain('late');
    } finally {
      await cli.close();
    }
  }, 40_000);
});
