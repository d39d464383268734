import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers.js';

// Two copies of hatchery-mcp in one process (an app and a plugin that each depend on it) share one
// nunjucks when npm dedupes it, and so one patched nunjucks runtime. Each copy must keep rendering
// with the sandbox intact: fread callable, and everything else still refused.
describe('two copies of the package in one process', () => {
  // Inside the repository, so the copy resolves nunjucks from the same node_modules.
  const copy = mkdtempSync(path.join(REPO_ROOT, 'tmp', 'dist-copy-'));
  cpSync(path.join(REPO_ROOT, 'dist'), copy, { recursive: true });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('keeps fread working and the sandbox closed in both', async () => {
    const dir = tempDir('two-copies-');
    writeFileSync(path.join(dir, 'note.txt'), 'from the note');
    const file = path.join(dir, 'read.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'read',
        desc: 'reads a note',
        start: 'Read',
        nodes: [
          { name: 'Read', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ fread("note.txt") }}' } },
        ],
      }),
    );
    const breakout = path.join(dir, 'escape.json');
    writeFileSync(
      breakout,
      JSON.stringify({
        name: 'escape',
        desc: 'tries to leave the sandbox',
        start: 'Esc',
        nodes: [
          {
            name: 'Esc',
            type: 'tool',
            tool_name: 'echo',
            tool_args: { text: '{{ range.constructor("return process")() }}' },
          },
        ],
      }),
    );
    const script = `
      const a = await import(${JSON.stringify(path.join(REPO_ROOT, 'dist', 'index.js'))});
      const b = await import(${JSON.stringify(path.join(copy, 'index.js'))});
      const out = [];
      for (const m of [a, b, a]) {
        const rt = new m.Runtime();
        out.push((await rt.run(await m.loadHatchery(${JSON.stringify(file)}))).output);
        try { await rt.run(await m.loadHatchery(${JSON.stringify(breakout)})); out.push('escaped'); }
        catch (err) { out.push(err.code); }
      }
      console.log(JSON.stringify({ distinct: a.Runtime !== b.Runtime, out }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
    });
    expect(JSON.parse(stdout)).toEqual({
      distinct: true,
      out: ['from the note', 'TEMPLATE', 'from the note', 'TEMPLATE', 'from the note', 'TEMPLATE'],
    });
  });
});
