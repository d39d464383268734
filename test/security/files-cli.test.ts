/**
 * The --allow-write flag of the built CLI: a run may not write into its hatchery's own folder unless
 * the flag opens that folder, and even then it never rewrites the hatchery file itself.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { CLI } from '../mcp/helpers.js';

function run(cwd: string, ...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
}

/** A project folder with `flows/log.json`, whose node appends its input to the file named by its input. */
function project() {
  const cwd = tempDir('files-cli-');
  const flows = path.join(cwd, 'flows');
  const file = path.join(flows, 'log.json');
  mkdirSync(flows);
  writeFileSync(
    file,
    JSON.stringify({
      name: 'log',
      desc: 'd',
      nodes: [
        { type: 'tool', tool_name: 'echo', tool_args: { text: 'line' }, write_output: '{{ ctx.input }}' },
      ],
    }),
  );
  return { cwd, flows, file };
}

describe('hatchery-mcp run --allow-write', () => {
  it('refuses writes in the hatchery folder by default and allows them with the flag', () => {
    const { cwd, flows, file } = project();
    const denied = run(cwd, 'run', file, '--input', 'out.txt', '-q');
    expect(denied.status).toBe(1);
    expect(denied.stderr).toContain(`inside the protected folder ${flows}`);
    expect(denied.stderr).toContain(`--allow-write ${flows}`);
    expect(existsSync(path.join(flows, 'out.txt'))).toBe(false);

    // The working folder is the default write root.
    expect(run(cwd, 'run', file, '--input', '../report.txt', '-q').status).toBe(0);
    expect(readFileSync(path.join(cwd, 'report.txt'), 'utf8')).toBe('line\n');

    const allowed = run(cwd, 'run', file, '--input', 'out.txt', '-q', '--allow-write', 'flows');
    expect(allowed.status).toBe(0);
    expect(readFileSync(path.join(flows, 'out.txt'), 'utf8')).toBe('line\n');

    const own = run(cwd, 'run', file, '--input', 'log.json', '-q', '--allow-write', 'flows');
    expect(own.status).toBe(1);
    expect(own.stderr).toContain('a run never creates or changes those, even with --allow-write');
  });

  it('documents the flag in both commands', () => {
    const cwd = tempDir('files-cli-');
    expect(run(cwd, 'run', '--help').stdout).toContain('--allow-write DIR');
    expect(run(cwd, 'serve', '--help').stdout).toContain('--allow-write DIR');
  });
});
