/**
 * A journal that cannot be written (here: a file-size limit of 0, which fails every write to a file
 * with EFBIG as a full disk fails with ENOSPC, without root) is reported on stderr once, naming the
 * folder and the errno; the run still answers and its result says its journal is incomplete (the
 * CLI's `--json`, an MCP call's result); and neither `runs list` nor `hatchery_runs` shows it running.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, runCli, tempDir } from '../helpers.js';

/** Runs the built CLI under `ulimit -f 0` (SIGXFSZ ignored, so a write fails instead of killing it). */
function runLimited(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'sh',
      ['-c', `trap '' XFSZ; ulimit -f 0; exec "$0" "$@"`, process.execPath, CLI_PATH, ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => {
      stdout += b;
    });
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a journal that cannot be written', () => {
  it('is reported once with the folder and errno, the result says so, and no run reads as running', async () => {
    const dir = tempDir('journal-full-');
    const state = path.join(dir, 'state');
    const file = path.join(dir, 'chain.json');
    const nodes = [0, 1, 2, 3, 4].map((i) => ({
      name: `S${i}`,
      type: 'script',
      cmd: ['echo', `step ${i}`],
      ...(i < 4 ? { next: `S${i + 1}` } : {}),
    }));
    writeFileSync(file, JSON.stringify({ name: 'chain', desc: 'five steps', nodes }));
    for (let i = 0; i < 2; i++) {
      const r = await runLimited(['run', file, '--input', 'x', '--json'], { HATCHERY_STATE: state });
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as { output: string; journal?: string };
      expect(result.output.trim()).toBe('step 4');
      expect(result.journal).toBe('incomplete');
      const reports = r.stderr.split('\n').filter((l) => l.includes('writing the run journal'));
      expect(reports, r.stderr).toHaveLength(1);
      expect(reports[0]).toContain(state);
      expect(reports[0]).toMatch(/\(EFBIG: /);
    }
    const list = await runCli(['runs', 'list', '--json'], { env: { HATCHERY_STATE: state } });
    expect(list.code, list.stderr).toBe(0);
    for (const run of JSON.parse(list.stdout) as { status: string }[]) expect(run.status).not.toBe('running');
  });

  it('is said in the MCP results of a server that cannot write it, and no run lists as running', async () => {
    const dir = tempDir('journal-full-mcp-');
    const served = path.join(dir, 'served');
    mkdirSync(served);
    writeFileSync(
      path.join(served, 'chain.json'),
      JSON.stringify({
        name: 'chain',
        desc: 'two steps',
        nodes: [
          { name: 'A', type: 'script', cmd: ['echo', 'first'], next: 'B' },
          { name: 'B', type: 'script', cmd: ['echo', 'second'] },
        ],
      }),
    );
    const transport = new StdioClientTransport({
      command: 'sh',
      args: ['-c', `trap '' XFSZ; ulimit -f 0; exec "$0" "$@"`, process.execPath, CLI_PATH, '--dir', served],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HATCHERY_STATE: path.join(dir, 'state'),
      },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (b) => {
      stderr += String(b);
    });
    const client = new Client({ name: 'full-disk', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (let i = 0; i < 3; i++) {
        const r = await client.callTool({ name: 'chain', arguments: { input: 'x' } });
        expect(r.isError, JSON.stringify(r)).toBeFalsy();
        const value = r.structuredContent as { output: string; journal?: string };
        expect(value.output.trim()).toBe('second');
        expect(value.journal).toBe('incomplete');
      }
      const started = await client.callTool({
        name: 'hatchery_start',
        arguments: { name: 'chain', input: 'y' },
      });
      const id = (started.structuredContent as { run_id: string }).run_id;
      const done = await client.callTool({
        name: 'hatchery_result',
        arguments: { run_id: id, wait_seconds: 30 },
      });
      expect((done.structuredContent as { journal?: string }).journal, JSON.stringify(done)).toBe(
        'incomplete',
      );
      const status = await client.callTool({ name: 'hatchery_status', arguments: { run_id: id } });
      expect((status.structuredContent as { state: string }).state).toBe('succeeded');
      const listed = await client.callTool({ name: 'hatchery_runs', arguments: {} });
      const runs = (listed.structuredContent as { runs: { state: string }[] }).runs;
      for (const run of runs) expect(run.state).not.toBe('running');
    } finally {
      await client.close();
    }
    const reports = stderr.split('\n').filter((l) => l.includes('writing the run journal'));
    expect(reports, stderr).toHaveLength(1);
    expect(reports[0]).toMatch(/\(EFBIG: /);
  });
});
