// Runs the build, the type check and the linter at the same time (each is one busy core at most)
// and prints their output one after the other; exits 1 if any of them failed. Used by `npm test`.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
const results = await Promise.all(
  scripts.map(
    (name) =>
      new Promise((resolve) => {
        const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (b) => {
          out += b;
        });
        child.stderr.on('data', (b) => {
          out += b;
        });
        child.on('close', (code) => resolve({ name, code, out }));
      }),
  ),
);
for (const { name, code, out } of results) {
  process.stdout.write(`> ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`}\n${out}`);
}
process.exitCode = results.every((r) => r.code === 0) ? 0 : 1;
