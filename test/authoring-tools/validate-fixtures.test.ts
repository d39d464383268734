/**
 * Issue 10: four of the files `validate` called ok that then failed at run time, kept as fixtures in
 * test/fixtures/authoring/; the built CLI now reports each before any model is paid.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadHatcheryText } from '../../src/loader/load.js';
import { runtimeRoots } from '../../src/tools/path-check.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers.js';
import { echoServer } from '../tools/helpers.js';

const rel = (name: string) => `test/fixtures/authoring/${name}`;
const abs = (name: string) => path.join(REPO_ROOT, rel(name));

describe('fixtures validate used to pass', () => {
  it('wrong tool_args for a built-in tool: validate exits 3', async () => {
    const res = await runCli(['validate', rel('tool-args-builtin.json')]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe(
      [
        `${rel('tool-args-builtin.json')}: nodes/0/tool_args (line 5, column 65): read_file needs argument "path" (arguments of read_file: path)`,
        `${rel('tool-args-builtin.json')}: nodes/0/tool_args/file (line 5, column 80): read_file has no argument "file"; its arguments: path`,
        '',
      ].join('\n'),
    );
  });

  it('a typo in the provider prefix: validate exits 3', async () => {
    const res = await runCli(['validate', rel('model-prefix-typo.json')]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe(
      `${rel('model-prefix-typo.json')}: nodes/0/model (line 4, column 30): unknown provider prefix "opnai:" in model "opnai:gpt-4o" (did you mean "openai:"?); valid prefixes: openai:, anthropic:, sampling or client (or a bare model name without a colon); a model id that itself contains a colon (Ollama's llama3:8b) is written openai:llama3:8b\n`,
    );
  });

  it('a broken hatch: sub-file two levels down: validate exits 3 naming the chain', async () => {
    const res = await runCli(['validate', rel('hatch-broken-sub.json')]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe(
      // The position is the parent's tool_name; the sub-file's own is left out (it is in another file).
      `${rel('hatch-broken-sub.json')}: nodes/1/tool_name (line 15, column 7): hatch:hatch-broken-sub/middle.json is invalid: hatch-broken-sub/middle.json → leaf.json: nodes/0/usr_prompt: template syntax error at line 1, column 24 of the template: expected variable end\n`,
    );
  });

  it('files outside the allowed folders: run exits 3 at load, before the first node', async () => {
    const res = await runCli(['run', rel('files-outside-roots.json')]);
    expect(res.code).toBe(3);
    expect(res.stderr).toContain(
      `${abs('files-outside-roots.json')}: files/hosts (line 4, column 14): "/etc/hosts" (/etc/hosts) is outside the folders runs may read (${path.dirname(abs('files-outside-roots.json'))}, ${REPO_ROOT.replace(/\/$/, '')}); move the file below one of them, or allow its folder with --allow-root DIR`,
    );
  });

  it('files outside the allowed folders: validate exits 3, and --allow-root opens the folder', async () => {
    const message = `files/hosts (line 4, column 14): "/etc/hosts" (/etc/hosts) is outside the folders runs may read (${path.dirname(abs('files-outside-roots.json'))}, ${REPO_ROOT.replace(/\/$/, '')}); move the file below one of them, or allow its folder with --allow-root DIR`;
    const res = await runCli(['validate', rel('files-outside-roots.json')]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe(`${rel('files-outside-roots.json')}: ${message}\n`);
    const allowed = await runCli(['validate', rel('files-outside-roots.json'), '--allow-root', '/etc']);
    expect(allowed.code).toBe(0);
  });

  it('a template syntax error is placed at its field in the file; the template position is in the message', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'bad.json');
    writeFileSync(
      file,
      '{\n  "name": "bad",\n  "desc": "d",\n  "nodes": [\n    { "name": "L", "usr_prompt": "{{ ctx.input }" }\n  ]\n}\n',
    );
    const res = await runCli(['validate', file]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe(
      `${file}: nodes/0/usr_prompt (line 5, column 20): template syntax error at line 1, column 14 of the template: expected variable end\n`,
    );
  });

  it('validate --connect starts the MCP servers of a file and reports a tool they lack', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'uses-mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'uses_mcp',
        desc: 'd',
        mcpServers: { e: echoServer() },
        nodes: [{ name: 'A', type: 'tool', tool_name: 'mcp:e/ech', tool_args: { text: 'x' } }],
      }),
    );
    const plain = await runCli(['validate', file]);
    expect(plain.code).toBe(0);
    const res = await runCli(['validate', '--connect', file]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe(
      `${file}: nodes/0/tool_name: MCP server "e" has no tool "ech" (did you mean "echo"?); its tools: echo, add, stats, fail, pid, getenv, sleep\n`,
    );
  });

  it('files outside the allowed folders: a load with the roots a default run has (what validate passes)', () => {
    const file = abs('files-outside-roots.json');
    const res = loadHatcheryText(readFileSync(file, 'utf8'), file, {
      roots: runtimeRoots({ cwd: REPO_ROOT }),
    });
    expect(res.ok ? [] : res.error.problems).toEqual([
      {
        path: 'files/hosts',
        line: 4,
        column: 14,
        message: `"/etc/hosts" (/etc/hosts) is outside the folders runs may read (${path.dirname(file)}, ${REPO_ROOT.replace(/\/$/, '')}); move the file below one of them, or allow its folder with --allow-root DIR`,
      },
    ]);
  });
});
