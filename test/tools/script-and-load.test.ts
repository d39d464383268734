import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMcpConfig } from '../../src/cli/config.js';
import type { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { expectEnded } from '../security/procs-helpers.js';
import { echoServer, loadIn, problemsIn, Scripted } from './helpers.js';

const run = (dir: string, nodes: unknown[], input = '') =>
  new Runtime({ providers: { openai: new Scripted([]) }, env: {} }).run(
    loadIn(dir, { name: 's', desc: 'd', nodes }),
    {
      input,
    },
  );

describe('script nodes', () => {
  it('fails with the exit code and the end of stderr', async () => {
    const err = (await run(tempDir(), [
      { type: 'script', cmd: [process.execPath, '-e', 'console.error("disk full"); process.exit(4)'] },
    ]).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('SCRIPT');
    expect(err.message).toMatch(/exited with code 4 \(it ran in .+\); stderr: disk full/);
  });

  it('kills a hanging program after timeout_ms', async () => {
    // The program outlasts the test timeout and writes its pid, to check it is gone.
    const pidFile = path.join(tempDir(), 'pid');
    const err = (await run(tempDir(), [
      { type: 'script', cmd: ['sh', '-c', 'echo $$ > "$1"; exec sleep 60', 'sh', pidFile], timeout_ms: 300 },
    ]).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain('killed after timeout_ms (300 ms)');
    await expectEnded(Number(readFileSync(pidFile, 'utf8')));
  });

  it('keeps a templated argument one argv element: no second command can be injected', async () => {
    const dir = tempDir();
    const victim = path.join(dir, 'foo');
    writeFileSync(victim, 'keep me');
    const input = `x; rm -rf ${victim} && echo $(rm ${victim}) \`rm ${victim}\``;
    const printf = await run(dir, [{ type: 'script', cmd: ['printf', '%s', '{{ ctx.input }}'] }], input);
    expect(printf.output).toBe(input);
    const node = await run(
      dir,
      [
        {
          type: 'script',
          cmd: [
            process.execPath,
            '-e',
            'process.stdout.write(JSON.stringify(process.argv.slice(1)))',
            '{{ ctx.input }}',
          ],
        },
      ],
      input,
    );
    expect(JSON.parse(node.output)).toEqual([input]);
    expect(existsSync(victim)).toBe(true);
  });
});

describe('load-time checks of tool references', () => {
  const drone = (tools: string[], extra: Record<string, unknown> = {}) => ({
    name: 'x',
    desc: 'd',
    nodes: [{ name: 'Agent', usr_prompt: 'u', tools, ...extra }],
  });

  it('names the JSON path and the reference of unknown tools, missing files and undefined servers', () => {
    const dir = tempDir();
    const found = problemsIn(
      dir,
      drone(['reed_file', 'hatch:missing.json', 'mcp:nowhere/tool', 'js:lib.mjs#f', 'weird:x', 'js:nohash']),
    );
    expect(found).toEqual([
      expect.stringMatching(
        /^nodes\/0\/tools\/0: unknown tool "reed_file" \(did you mean "read_file"\?\): use a built-in \(read_file, .*shell_exec\)/,
      ),
      expect.stringMatching(/^nodes\/0\/tools\/1: "hatch:missing.json": file "missing.json" not found/),
      expect.stringMatching(
        /^nodes\/0\/tools\/2: "mcp:nowhere\/tool": no MCP server named "nowhere"; define it/,
      ),
      expect.stringMatching(/^nodes\/0\/tools\/3: "js:lib.mjs#f": file "lib.mjs" not found/),
      expect.stringMatching(/^nodes\/0\/tools\/4: unknown tool reference prefix "weird:"/),
      expect.stringMatching(
        /^nodes\/0\/tools\/5: tool reference "js:nohash" must be js:<module path>#<export name>/,
      ),
    ]);
  });

  it('checks baneling references and spawn template tools too', () => {
    const dir = tempDir();
    expect(
      problemsIn(dir, {
        name: 'x',
        desc: 'd',
        nodes: [
          { type: 'tool', tool_name: 'mcp:ghost/echo', next: 'B' },
          { name: 'B', usr_prompt: 'u', spawn: { templates: [{ name: 't', desc: 'd', tools: ['nope'] }] } },
        ],
      }),
    ).toEqual([
      expect.stringMatching(/^nodes\/0\/tool_name: "mcp:ghost\/echo": no MCP server named "ghost"/),
      expect.stringMatching(/^nodes\/1\/spawn\/templates\/0\/tools\/0: unknown tool "nope"/),
    ]);
  });

  it('refuses two tools under one name', () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'sub.json'),
      JSON.stringify({ name: 'read_file', desc: 'd', nodes: [{ usr_prompt: 'u' }] }),
    );
    writeFileSync(path.join(dir, 'lib.mjs'), 'export function echo() {}');
    expect(
      problemsIn(dir, drone(['read_file', 'hatch:sub.json', 'echo', 'js:lib.mjs#echo', 'echo'])),
    ).toEqual([
      'nodes/0/tools/1: two tools named "read_file" (tools/0 and tools/1: "hatch:sub.json"); the model could not tell them apart: remove one',
      'nodes/0/tools/3: two tools named "echo" (tools/2 and tools/3: "js:lib.mjs#echo"); the model could not tell them apart: remove one',
      'nodes/0/tools/4: "echo" is listed twice (tools/2 and tools/4): remove one',
    ]);
    const servers = { mcpServers: { a: echoServer() } };
    expect(problemsIn(dir, { ...drone(['mcp:a/echo', 'echo']), ...servers })).toEqual([
      'nodes/0/tools/1: two tools named "echo" (tools/0 and tools/1: "echo"); the model could not tell them apart: remove one',
    ]);
    expect(problemsIn(dir, { ...drone(['mcp:a', 'mcp:a']), ...servers })).toEqual([
      'nodes/0/tools/1: "mcp:a" is listed twice (tools/0 and tools/1): remove one',
    ]);
  });

  it('checks the command lines of the mcp list', () => {
    const dir = tempDir();
    expect(
      problemsIn(dir, drone([], { mcp: ['server --x | tee log', 'node "open', 'https://ok.example/mcp'] })),
    ).toEqual([
      expect.stringMatching(
        /^nodes\/0\/mcp\/0: "\|" is shell syntax, but the command runs without a shell.*\(in "server --x \| tee log"\)$/,
      ),
      expect.stringMatching(/^nodes\/0\/mcp\/1: unterminated " quote/),
    ]);
  });

  it('accepts tool_output_limit on drones', () => {
    const dir = tempDir();
    expect(problemsIn(dir, drone(['echo'], { tool_output_limit: 5000 }))).toEqual([]);
    expect(problemsIn(dir, drone(['echo'], { tool_output_limit: 5 }))[0]).toMatch(
      /^nodes\/0\/tool_output_limit: /,
    );
  });
});

describe('mcp.json.example', () => {
  it('is a valid --mcp-config file', async () => {
    const servers = await readMcpConfig(path.resolve(import.meta.dirname, '../../mcp.json.example'));
    expect(Object.keys(servers).length).toBeGreaterThan(0);
  });
});
