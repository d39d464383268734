/**
 * Issue 8, process trees: scripts and shell_exec run in their own process group, and timeouts,
 * cancellation, the output limit and this process exiting end the whole tree, promptly, even when
 * a grandchild holds the output pipe. The sleeps holding the pipe outlast the test timeout, so a run
 * that waited for them fails rather than passing slowly.
 * The tests mostly wait for timers and signals, and each owns its folder and processes, so they run
 * concurrently.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { waitFor } from '../mcp/helpers.js';
import { loadIn, Scripted, toolResults } from '../tools/helpers.js';
import { expectEnded, HOLD_S, running, treeArgv, treePids } from './procs-helpers.js';

function script(node: Record<string, unknown>, signal?: AbortSignal) {
  const dir = tempDir();
  const h = loadIn(dir, { name: 'p', desc: 'd', nodes: [{ name: 'S', type: 'script', ...node }] });
  return new Runtime({ env: {} }).run(h, { input: '', signal });
}

/** Runs one drone that makes the given shell_exec calls; returns what the model saw of them. */
async function shellCalls(calls: Record<string, unknown>[]) {
  const dir = tempDir();
  const h = loadIn(dir, { name: 's', desc: 'd', nodes: [{ usr_prompt: 'go', tools: ['shell_exec'] }] });
  const model = new Scripted([{ toolCalls: calls.map((args) => ({ name: 'shell_exec', args })) }, 'done']);
  await new Runtime({ providers: { openai: model }, env: {}, tools: { allowShell: true } }).run(h);
  return toolResults(model);
}

describe.concurrent('script timeouts end the whole process tree', () => {
  it('returns TIMEOUT after timeout_ms even though sleep holds the pipe (was: waited for the sleep)', async () => {
    const err = (await script({ cmd: ['sh', '-c', `sleep ${HOLD_S}; echo x`], timeout_ms: 300 }).catch(
      (e) => e,
    )) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain('killed after timeout_ms (300 ms)');
  });

  it('kills the background grandchild too', async () => {
    const dir = tempDir();
    const err = (await script({ cmd: treeArgv(dir), timeout_ms: 500 }).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    const { sh, grand } = await treePids(dir);
    await expectEnded(sh, grand);
  });

  it('uses SIGKILL on a tree that ignores SIGTERM, within the grace', async () => {
    const dir = tempDir();
    const err = (await script({ cmd: treeArgv(dir, true), timeout_ms: 500 }).catch(
      (e) => e,
    )) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    const { sh, grand } = await treePids(dir);
    await expectEnded(sh, grand);
  });
});

describe.concurrent('cancellation ends the whole process tree', () => {
  it('settles at once and leaves no grandchild (was: waited for sleep 30)', async () => {
    const dir = tempDir();
    const ctrl = new AbortController();
    const run = script({ cmd: treeArgv(dir) }, ctrl.signal).catch((e) => e as HatcheryError);
    const { sh, grand } = await treePids(dir);
    ctrl.abort();
    const err = await run;
    expect(err).toMatchObject({ code: 'ABORTED' });
    await expectEnded(sh, grand);
  });
});

describe.concurrent('a program that ends while its background job holds the pipe', () => {
  it('returns its output and ends the job (was: waited for the job)', async () => {
    const dir = tempDir();
    const res = await script({
      cmd: ['sh', '-c', `echo $$ > "$1/pid"; sleep ${HOLD_S} & echo $! > "$1/grand"; echo done`, 'sh', dir],
    });
    expect(res.output).toBe('done\n');
    const { grand } = await treePids(dir);
    await expectEnded(grand);
  });
});

describe.concurrent('the output limit', () => {
  it('says the script reached the output limit, with the limit (was: killed by SIGTERM)', async () => {
    const err = (await script({ cmd: ['yes'] }).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('SCRIPT');
    expect(err.message).toMatch(
      /"yes" was stopped: it wrote more than 10000000 bytes to stdout \(the output limit\)/,
    );
    expect(err.message).not.toMatch(/SIGTERM/);
  });

  it('says so for shell_exec too', async () => {
    const [res] = await shellCalls([{ argv: ['yes'] }]);
    expect(res).toMatchObject({ isError: true });
    expect(res!.content).toMatch(/wrote more than 10000000 bytes to stdout \(the output limit\)/);
    expect(res!.content).not.toMatch(/SIGTERM/);
  });
});

describe.concurrent('shell_exec', () => {
  it('ends the whole tree on timeout_ms', async () => {
    const dir = tempDir();
    const [res] = await shellCalls([{ argv: treeArgv(dir), timeout_ms: 500 }]);
    expect(res).toMatchObject({ isError: true, content: expect.stringContaining('killed after 500 ms') });
    const { sh, grand } = await treePids(dir);
    await expectEnded(sh, grand);
  });
});

describe.concurrent('this process exiting', () => {
  it('kills the trees still running (they are in their own groups, so nothing else would)', async () => {
    const dir = tempDir();
    // The built module (dist/ is current: see global-setup.ts): plain node starts it without tsx.
    const program = new URL('../../dist/core/process/program.js', import.meta.url).href;
    const code = `
      const { runProgram } = await import(${JSON.stringify(program)});
      runProgram(${JSON.stringify(treeArgv(dir))}, { stdin: '', cwd: '.', timeoutMs: 60000, signal: new AbortController().signal });
      const { existsSync } = await import('node:fs');
      setInterval(() => { if (existsSync(${JSON.stringify(`${dir}/grand`)})) process.exit(0); }, 20);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: 'inherit',
    });
    const exitCode = await new Promise((r) => child.on('exit', r));
    expect(exitCode).toBe(0);
    const { sh, grand } = await treePids(dir);
    await waitFor(() => !running(sh) && !running(grand), 3000, 'the tree to die');
  });
});
