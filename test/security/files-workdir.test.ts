/**
 * Programs' working folders. A script node starts where the user works (the process's working
 * folder, also when that is the hatchery's folder; the hatchery's folder under a server started
 * from / or home, as desktop clients start it), never silently in a temp folder (issue 37);
 * shell_exec, which a model drives, works only in a write root that is not protected (issue 8).
 */
import { chmodSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { load, tempDir } from '../helpers.js';
import { textOf, writeHatchery } from '../mcp/helpers.js';

/** A program that prints its working folder and drops `planted.json` there. */
const PLANT = [
  process.execPath,
  '-e',
  'require("fs").writeFileSync("planted.json", "{}"); process.stdout.write(process.cwd())',
];

const scriptDef = (cmd: string[]) => ({
  name: 'plant',
  desc: 'runs a program',
  nodes: [{ type: 'script', cmd }],
});

describe('the working folder of programs', () => {
  it('a script served over MCP runs in the working folder, not the served folder', async () => {
    const project = tempDir('files-workdir-');
    const served = path.join(project, 'hatchery');
    writeHatchery(served, 'plant.json', scriptDef(PLANT));
    const runtime = new Runtime({ env: {}, cwd: project });
    const core = await HatcheryMcpServer.start({ dir: served, runtime, log: () => {} });
    const client = new Client({ name: 'files-test', version: '1.0.0' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await core.connect(b);
    await client.connect(a);
    try {
      const res = await client.callTool({ name: 'plant', arguments: { input: '' } });
      expect(textOf(res)).toBe(project);
      expect(existsSync(path.join(served, 'planted.json'))).toBe(false);
      expect(existsSync(path.join(project, 'planted.json'))).toBe(true);
      await core.idle();
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('planted');
    } finally {
      await client.close();
      await core.close();
    }
  });

  it('runs ./helper beside the hatchery file, in the working folder', async () => {
    const dir = tempDir('files-workdir-h-');
    const work = tempDir('files-workdir-w-');
    writeFileSync(path.join(dir, 'helper.sh'), '#!/bin/sh\npwd -P\n');
    chmodSync(path.join(dir, 'helper.sh'), 0o755);
    const h = load(scriptDef(['./helper.sh']), dir);
    expect((await new Runtime({ env: {}, cwd: work }).run(h)).output).toBe(`${work}\n`);
  });

  it("a script runs where the user works, in the hatchery's folder under a desktop client, never in the temp folder", async () => {
    const dir = tempDir('files-workdir-h-');
    const work = tempDir('files-workdir-w-');
    const h = load(scriptDef([process.execPath, '-e', 'process.stdout.write(process.cwd())']), dir);
    expect((await new Runtime({ env: {}, cwd: work }).run(h)).output).toBe(work);
    // Started in the hatchery's own folder (protected from runs' writes): the script still runs there.
    expect((await new Runtime({ env: {}, cwd: dir }).run(h)).output).toBe(dir);
    for (const desktop of ['/', homedir()]) {
      const out = (await new Runtime({ env: {}, cwd: desktop }).run(h)).output;
      expect(out).toBe(dir);
      expect(out).not.toBe(realpathSync(tmpdir()));
    }
  });

  it('shell_exec: cwd outside the write roots or in a protected folder is refused; the default is the working folder', async () => {
    const work = tempDir('files-workdir-w-');
    const dir = path.join(work, 'flows');
    mkdirSync(dir);
    mkdirSync(path.join(work, 'sub'));
    const h = load(
      { name: 's', desc: 'd', model: 'openai:m', nodes: [{ usr_prompt: 'x', tools: ['shell_exec'] }] },
      dir,
    );
    const pwd = [process.execPath, '-e', 'process.stdout.write(process.cwd())'];
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: 'shell_exec', args: { argv: pwd, cwd: '/' } },
          { name: 'shell_exec', args: { argv: pwd, cwd: '.' } },
          { name: 'shell_exec', args: { argv: pwd } },
          { name: 'shell_exec', args: { argv: pwd, cwd: path.join(work, 'sub') } },
        ],
      },
      'done',
    ]);
    await new Runtime({ providers: { openai: model }, env: {}, cwd: work, tools: { allowShell: true } }).run(
      h,
    );
    const results = (model.calls[1]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toContain('working folder "/" (/): it is outside the write roots');
    expect(results[1]).toContain(`inside the protected folder ${dir}`);
    expect(results[2]).toBe(work);
    expect(results[3]).toBe(path.join(work, 'sub'));
  });
});
