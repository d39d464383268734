/**
 * Issue 36, "concurrent appends lose writes": 40 calls appending to one write_output file mostly
 * failed with a false "it is a symbolic link" (two creators raced on O_EXCL and EEXIST was read as a
 * link), their output lost. Through a real MCP client, 40 concurrent runs append to one new file: all
 * succeed, each line whole. A symlink planted at the target, dangling or not, is still refused.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { inMemory, textOf, writeHatchery } from '../mcp/helpers.js';

const RUNS = 40;
/** Long lines: a torn append (two writes, or interleaved ones) would show inside a line. */
const LINE_BYTES = 16 * 1024;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A served folder with `append` (appends its input to `out/log.txt`) and `to` (appends to the path it is given). */
async function setup() {
  const dir = path.join(tempDir('files-append-'), 'hatchery');
  const out = tempDir('files-append-out-');
  const log = path.join(out, 'log.txt');
  const echo = (text: string, write_output: string) => ({
    name: 'Echo',
    type: 'tool',
    tool_name: 'echo',
    tool_args: { text },
    write_output,
  });
  writeHatchery(dir, 'append.json', {
    name: 'append',
    desc: 'appends a line',
    nodes: [echo('{{ ctx.input }}', log)],
  });
  writeHatchery(dir, 'to.json', {
    name: 'to',
    desc: 'writes to the path it is given',
    nodes: [echo('planted', '{{ ctx.input }}')],
  });
  const server = await inMemory(dir, { allowRoots: [out] });
  cleanups.push(server.close);
  return { client: server.client, out, log };
}

/** The line run `i` appends: its number, then filler that spells it again, so a torn line shows. */
function lineOf(i: number): string {
  const tag = `run-${String(i).padStart(2, '0')}:`;
  return tag + tag.repeat(Math.ceil(LINE_BYTES / tag.length)).slice(0, LINE_BYTES - tag.length);
}

describe('concurrent appends to one write_output file', () => {
  it('40 concurrent runs appending to one new file all succeed, each line whole', async () => {
    const { client, log } = await setup();
    const results = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        client.callTool({ name: 'append', arguments: { input: lineOf(i) } }),
      ),
    );
    const failed = results.filter((r) => r.isError).map(textOf);
    expect(failed).toEqual([]);
    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(RUNS);
    expect(new Set(lines)).toEqual(new Set(Array.from({ length: RUNS }, (_, i) => lineOf(i))));
  });

  it('a symlink planted at the target is refused, dangling or not, and nothing is written through it', async () => {
    const { client, out } = await setup();
    // Link targets inside the write root: only the link itself can be refused.
    const real = path.join(out, 'real');
    mkdirSync(real);
    const existing = path.join(real, 'existing.txt');
    writeFileSync(existing, 'untouched\n');
    const missing = path.join(real, 'missing.txt');
    symlinkSync(existing, path.join(out, 'live.txt'));
    symlinkSync(missing, path.join(out, 'dangling.txt'));
    // Many at once, as in the race above: a refusal must not turn into a retry that follows the link.
    const targets = Array.from({ length: RUNS }, (_, i) =>
      path.join(out, i % 2 ? 'live.txt' : 'dangling.txt'),
    );
    const results = await Promise.all(
      targets.map((target) => client.callTool({ name: 'to', arguments: { input: target } })),
    );
    for (const [i, r] of results.entries()) {
      expect(r.isError, targets[i]).toBe(true);
      expect(textOf(r)).toContain('it is a symbolic link');
    }
    expect(readFileSync(existing, 'utf8')).toBe('untouched\n');
    expect(existsSync(missing)).toBe(false);
  });
});
