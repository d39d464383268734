/** Helpers of the loader security tests: the built CLI as a process, and hostile hatchery files. */
import { spawn } from 'node:child_process';

/** The built CLI (npm test builds before running vitest). */
export const CLI = new URL('../../dist/cli.js', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;

/** Runs the built CLI as a user would; resolves with exit code and both streams. */
export function cli(
  args: string[],
  opts: { stdin?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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
    child.stdin.end(opts.stdin ?? '');
  });
}

/** A value `depth` objects deep: {"a":{"a":...}}. */
export function nested(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** A hatchery whose echo node's tool_args is nested `depth` levels deep (4 KB at 2,000 levels). */
export function deepDef(name: string, depth = 2000): Record<string, unknown> {
  return {
    name,
    desc: 'nested too deep',
    nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'x', deep: nested(depth) } }],
  };
}
