/**
 * What the Postgres tests share: served CLIs ended as a machine that dies ends them, a fake model's
 * reply that holds one step of a chain while a replica is killed, a free port.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { lastUserText, type WireBody } from '../fakes/http.js';
import type { spawnCli } from '../mcp/helpers.js';

/** Kills a served CLI at once (SIGKILL: no shutdown, as when its machine dies) and waits for its exit. */
export async function killed(server: Awaited<ReturnType<typeof spawnCli>>): Promise<void> {
  const child = (server.transport as unknown as { _process: ChildProcess })._process;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/**
 * A fake model reply for chains whose prompts say "step N ...": the first call of step `hold` answers
 * in a minute (its replica is killed meanwhile), every other call in 20 ms, with "done N".
 */
export function holdingStep(hold: string): (body: WireBody) => { text: string; delayMs: number } {
  let held = false;
  return (body) => {
    const step = /step (\d)/.exec(lastUserText(body.messages))?.[1] ?? '?';
    if (step === hold && !held) {
      held = true;
      return { text: `done ${step}`, delayMs: 60_000 };
    }
    return { text: `done ${step}`, delayMs: 20 };
  };
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
