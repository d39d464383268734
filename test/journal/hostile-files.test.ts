/**
 * Journal files that would break readers: a line nested 5,000 deep, a file that is not a journal, a
 * file over the size a journal may have. Listing, `runs show`, hatchery_runs and a server's start-up
 * claims skip and count them; the other runs stay readable. And a run whose process died reads as
 * `interrupted`, never `running`, through the built CLI.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { runCli, startCli, tempDir } from '../helpers.js';
import { hatcheryDir, spawnCli, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';

const DEEP_ID = '11111111-2222-4333-8444-555555555555';
const JUNK_ID = '22222222-3333-4444-8555-666666666666';

/** The id of the one run file in `state`. */
function onlyRun(state: string): string {
  const files = readdirSync(state).filter((f) => f.endsWith('.jsonl'));
  expect(files).toHaveLength(1);
  return files[0]!.replace(/\.jsonl$/, '');
}

/** A copy of run `id`'s first line under another id, followed by a line nested `depth` deep. */
function plantDeep(state: string, id: string, depth: number): void {
  const first = readFileSync(path.join(state, `${id}.jsonl`), 'utf8').split('\n')[0]!;
  const deep = `{"v":1,"at":1,"type":"node_end","node":"A","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  writeFileSync(path.join(state, `${DEEP_ID}.jsonl`), `${first.replace(id, DEEP_ID)}\n${deep}\n`);
}

describe('hostile journal files', () => {
  it('a 5,000-deep line and a non-journal file break neither runs list, runs show, hatchery_runs nor start-up claims', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'h.json', {
      name: 'h',
      desc: 'echoes',
      nodes: [{ name: 'A', type: 'script', cmd: ['echo', 'hi'] }],
    });
    const state = tempDir('hatchery-state-');
    const env = { HATCHERY_STATE: state };
    const first = await runCli(['run', path.join(dir, 'h.json')], { env });
    expect(first.code, first.stderr).toBe(0);
    const good = onlyRun(state);
    // Its owner (the CLI above) is gone and it never ended: start-up claims it.
    plantDeep(state, good, 5000);
    writeFileSync(path.join(state, `${JUNK_ID}.jsonl`), '{{{ not a journal\n'.repeat(3));

    const list = await runCli(['runs', 'list', '--json'], { env });
    expect(list.code, list.stderr).toBe(0);
    const runs = JSON.parse(list.stdout) as { id: string; status: string; corruptLines?: number }[];
    expect(runs.map((r) => r.id).sort()).toEqual([DEEP_ID, good].sort());
    expect(runs.find((r) => r.id === DEEP_ID)).toMatchObject({ corruptLines: 1, status: 'interrupted' });
    expect(list.stderr).toContain('1 journal file');
    expect(list.stderr).toContain('could not be read');

    const show = await runCli(['runs', 'show', DEEP_ID], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(DEEP_ID);
    const junk = await runCli(['runs', 'show', JUNK_ID], { env });
    expect(junk.code).not.toBe(0);
    expect(junk.stderr).toContain('not a readable run_start record');

    const server = await spawnCli(dir, { env, args: ['--list-all-runs', '--resume-interrupted'] });
    try {
      const res = await server.client.callTool({ name: 'hatchery_runs', arguments: {} });
      expect(res.isError, textOf(res)).toBeFalsy();
      const data = res.structuredContent as { runs: { run_id: string }[]; skipped?: number };
      expect(data.runs.map((r) => r.run_id).sort()).toEqual([DEEP_ID, good].sort());
      expect(data.skipped).toBe(1);
      // The server claimed the planted run at start-up and still answers.
      await waitFor(() =>
        readFileSync(path.join(state, `${DEEP_ID}.jsonl`), 'utf8').includes('"interrupted"'),
      );
      const tools = await server.client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('h');
    } finally {
      await server.close();
    }
  });

  it('a file over the size a journal may have is skipped by listing and refused by name when read', async () => {
    const state = tempDir('hatchery-state-');
    const small = new FileRunStore(state, { maxFileBytes: 4096 });
    const id = '33333333-4444-4555-8666-777777777777';
    const start = JSON.stringify({
      v: 1,
      at: 1,
      type: 'run_start',
      id,
      hatchery: 'big',
      file: '/x',
      startedAt: 1,
    });
    writeFileSync(path.join(state, `${id}.jsonl`), `${start}\n${'x'.repeat(8192)}\n`);
    const skipped: string[] = [];
    expect(await small.list({ skipped: (_id, why) => skipped.push(why) })).toEqual([]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toContain('more than the 4096');
    await expect(small.read(id)).rejects.toThrow(/8\d{3} bytes, more than the 4096/);
    // A store with the default limit reads it.
    expect((await new FileRunStore(state).read(id))?.summary.hatchery).toBe('big');
  });
});

describe('a run whose process died', () => {
  it('reads as interrupted in runs list and runs show, and resumes', async () => {
    const dir = tempDir('hatchery-dead-');
    const go = path.join(dir, 'go');
    const pidFile = path.join(dir, 'pid');
    const file = path.join(dir, 'slow.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'slow',
        desc: 'waits until told to go',
        nodes: [
          {
            name: 'Wait',
            type: 'script',
            cmd: [
              'sh',
              '-c',
              `if [ -f ${go} ]; then echo went; else echo $$ > ${pidFile}; exec sleep 60; fi`,
            ],
          },
        ],
      }),
    );
    const state = tempDir('hatchery-state-');
    const env = { HATCHERY_STATE: state };
    const run = startCli(['run', file, '--input', 'x'], { env });
    run.child.stdin.end();
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
    // Journal lines are written in batches: the node's start is on disk before the process dies.
    await waitFor(() =>
      readdirSync(state).some((f) => readFileSync(path.join(state, f), 'utf8').includes('"node_start"')),
    );
    run.child.kill('SIGKILL');
    await run.exit;
    // The script's group outlives a SIGKILLed CLI (nobody is left to end it): end it here.
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
    const id = onlyRun(state);

    const list = await runCli(['runs', 'list'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/interrupted/);
    expect(list.stdout).not.toMatch(/running/);
    const json = await runCli(['runs', 'list', '--json', '--status', 'interrupted'], { env });
    expect((JSON.parse(json.stdout) as { id: string }[]).map((r) => r.id)).toEqual([id]);
    const show = await runCli(['runs', 'show', id], { env });
    expect(show.stdout).toMatch(/interrupted/);
    expect(show.stdout).not.toMatch(/\brunning\b/);

    writeFileSync(go, '');
    const resumed = await runCli(['runs', 'resume', id], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('went');
    const after = await runCli(['runs', 'list', '--json'], { env });
    expect((JSON.parse(after.stdout) as { status: string }[])[0]?.status).toBe('succeeded');
  });
});
