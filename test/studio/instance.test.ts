/**
 * Issue 36: the studio's cookie is bound to its instance (browsers send a 127.0.0.1 cookie to every
 * port, so another local server receives it), and a long text is redacted before the studio cuts it.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Runtime } from '../../src/runtime/runtime.js';
import { type Studio, startStudio } from '../../src/studio/server.js';
import { tempDir } from '../helpers.js';
import { events } from './helpers.js';

const echo = {
  name: 'say',
  desc: 'echoes its input',
  nodes: [{ name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input }}' } }],
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A studio on a folder holding the echo hatchery, with `env` as its runtime's environment. */
async function studioWith(env: Record<string, string>, token?: string): Promise<Studio> {
  const dir = tempDir('studio-instance-');
  writeFileSync(`${dir}/say.json`, JSON.stringify(echo));
  const runtime = new Runtime({ env, cwd: tempDir('studio-instance-state-') });
  const studio = await startStudio({ dir, runtime, port: 0, token, debounceMs: 60, log: () => undefined });
  closers.push(async () => {
    await studio.close();
    await runtime.close();
  });
  return studio;
}

/** Opens the printed URL as a browser does; returns the cookie the studio set (`name=value`). */
async function login(s: Studio): Promise<string> {
  const res = await fetch(s.url, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const set = res.headers.get('set-cookie') ?? '';
  return set.split(';')[0]!;
}

const status = async (s: Studio, cookie: string) =>
  (await fetch(`http://127.0.0.1:${s.port}/api/hatcheries`, { headers: { cookie } })).status;

describe('the studio cookie', () => {
  it('opens only the instance that set it: another studio rejects it, even with the same token', async () => {
    const token = 'f'.repeat(32);
    const a = await studioWith({}, token);
    const b = await studioWith({}, token);
    const c = await studioWith({});
    const [ca, cb, cc] = [await login(a), await login(b), await login(c)];
    const [na, va] = ca.split('=') as [string, string];
    const [nb, vb] = cb.split('=') as [string, string];
    expect(await status(a, ca)).toBe(200);
    expect(await status(b, cb)).toBe(200);
    // Names differ per instance: the browser keeps one cookie per studio, not one shared by ports.
    expect(new Set([na, nb, cc.split('=')[0]]).size).toBe(3);
    expect(na).toContain(String(a.port));
    // The value is not the token: a local server on another port that receives it cannot open the URL.
    for (const v of [va, vb]) {
      expect(v).not.toContain(token);
      expect((await fetch(`http://127.0.0.1:${a.port}/api/hatcheries?token=${v}`)).status).toBe(401);
    }
    // Every way of presenting a's cookie to another instance: as is, under b's name, all cookies at once
    // (beside b's own cookie with its last character changed).
    const forged = `${nb}=${vb.slice(0, -1)}${vb.endsWith('0') ? '1' : '0'}`;
    for (const other of [b, c]) {
      const name = (other === b ? cb : cc).split('=')[0]!;
      expect(await status(other, ca)).toBe(401);
      expect(await status(other, `${name}=${va}`)).toBe(401);
      expect(await status(other, `${ca}; ${other === b ? forged : 'x=y'}`)).toBe(401);
    }
    // The token itself as a cookie value opens nothing: only the URL carries it.
    expect(await status(a, `${na}=${token}`)).toBe(401);
  });
});

describe('texts the studio cuts', () => {
  it('are redacted first: a secret across the cut leaves no half of it', async () => {
    const SECRET = 'ghp_0123456789abcdefghijABCDEFGHIJ';
    const s = await studioWith({ GITHUB_TOKEN: SECRET });
    const cookie = await login(s);
    const feed = events(s);
    closers.push(async () => {
      feed.close();
    });
    await feed.open;
    // The studio cuts event texts at 2000 characters: the secret starts 12 characters before.
    const input = `${'x'.repeat(1988)}${SECRET}${'y'.repeat(50)}`;
    const res = await fetch(`http://127.0.0.1:${s.port}/api/runs`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ hatchery: 'say', input }),
    });
    expect(res.status).toBe(202);
    await feed.waitFor((f) => f.type === 'run_status' && f.data.status === 'succeeded');
    const all = feed.all();
    expect(all).toContain('[redacted]');
    expect(all).not.toContain(SECRET.slice(0, 8));
  });
});
