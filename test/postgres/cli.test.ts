/**
 * `--store postgres://...` from the shell: a run kept by one process is listed, shown and cancelled
 * by others given the same URL (or HATCHERY_STORE); wrong flags and unreachable databases say what
 * to fix, never the password.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, startCli, tempDir, writeHatchery } from '../helpers.js';
import { testDatabase } from './database.js';

let url: string;
beforeAll(async () => {
  url = await testDatabase('cli');
});

describe('hatchery-mcp with --store', () => {
  it('keeps a run in the database for every later process to list and show', async () => {
    const run = await runCli(['run', 'hatchery/read-notes.json', '--store', url], { cwd: REPO_ROOT });
    expect(run.stderr).not.toContain('error');
    expect(run.code).toBe(0);
    const list = await runCli(['runs', 'list', '--json'], { env: { HATCHERY_STORE: url } });
    expect(list.code).toBe(0);
    const runs = JSON.parse(list.stdout) as { id: string; hatchery: string; status: string }[];
    expect(runs).toMatchObject([{ hatchery: 'read_notes', status: 'succeeded' }]);
    const show = await runCli(['runs', 'show', runs[0]!.id.slice(0, 8), '--store', url]);
    expect(show.stdout).toContain(`run ${runs[0]!.id}: read_notes, succeeded`);
    expect(show.stdout).toMatch(/Read \(\d+ ms\)/);
  });

  it('cancels a run another process is running', async () => {
    const dir = tempDir('hatchery-pg-cli-');
    const file = writeHatchery(dir, 'slow.json', {
      name: 'slow',
      desc: 'waits',
      nodes: [{ name: 'S', type: 'script', cmd: [process.execPath, '-e', 'setTimeout(() => {}, 30000)'] }],
    });
    const running = startCli(['run', file, '--store', url], { cwd: dir });
    running.child.stdin.end();
    let id: string | undefined;
    let ended = false;
    void running.exit.then(() => {
      ended = true;
    });
    while (id === undefined) {
      if (ended) throw new Error(`the run ended before it was cancelled: ${running.err()}`);
      const list = await runCli([
        'runs',
        'list',
        '--json',
        '--status',
        'running',
        '--hatchery',
        'slow',
        '--store',
        url,
      ]);
      id = (JSON.parse(list.stdout) as { id: string }[])[0]?.id;
      if (id === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    const cancel = await runCli(['runs', 'cancel', id, '--store', url]);
    expect(cancel.stdout).toBe(`asked the process running ${id} to stop it\n`);
    expect(await running.exit).toBe(130);
    const show = await runCli(['runs', 'show', id, '--json', '--store', url]);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'cancelled', node: 'S' });
  });

  it('says what to fix for a wrong URL, clashing flags and a database it cannot reach', async () => {
    const notPg = await runCli(['runs', 'list', '--store', 'mysql://root:hunter2@db/x']);
    expect(notPg.code).toBe(2);
    expect(notPg.stderr).toContain('--store (or HATCHERY_STORE) takes a PostgreSQL URL');
    expect(notPg.stderr).not.toContain('hunter2');
    const both = await runCli(['run', 'hatchery/read-notes.json', '--store', url, '--state', '/tmp/x']);
    expect(both.stderr).toContain('--state and --store exclude each other');
    const none = await runCli(['run', 'hatchery/read-notes.json', '--no-journal', '--store', url]);
    expect(none.stderr).toContain('--store and --no-journal exclude each other');
    const replica = await runCli(['run', 'hatchery/read-notes.json', '--replica-id', 'r1']);
    expect(replica.stderr).toContain('--replica-id needs --store URL');
    const down = await runCli(['runs', 'list', '--store', 'postgres://me:s3cret@127.0.0.1:1/runs']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot use the run store at postgres://127.0.0.1:1/runs');
    expect(down.stderr).not.toContain('s3cret');
  });
});
