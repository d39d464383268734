import { request } from 'node:http';
import { FileRunStore } from '../../src/journal/file-store.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { type Studio, startStudio } from '../../src/studio/server.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { tempDir } from '../helpers.js';

/** The API key the studio's runtime holds: it must never reach a response. */
export const SECRET_KEY = 'sk-studio-test-7f3a9c1e5b2d4f6a8c0e';

/** A studio on a temporary folder, a fake OpenAI server and a journal; `close` stops all three. */
export async function openStudio(
  files: Record<string, unknown>,
  opts: { latencyMs?: number; state?: string } = {},
) {
  const dir = tempDir('studio-');
  const { writeFileSync } = await import('node:fs');
  for (const [name, def] of Object.entries(files))
    writeFileSync(`${dir}/${name}`, typeof def === 'string' ? def : JSON.stringify(def, null, 2));
  const fake = new FakeOpenAI({ latencyMs: opts.latencyMs });
  await fake.start();
  const state = opts.state ?? tempDir('studio-state-');
  const runtime = new Runtime({
    env: { OPENAI_API_KEY: SECRET_KEY, OPENAI_BASE_URL: fake.baseURL, HATCHERY_MODEL: 'openai:gpt-4o-mini' },
    cwd: state,
    store: new FileRunStore(state),
  });
  const studio = await startStudio({ dir, runtime, port: 0, debounceMs: 60, log: () => undefined });
  return {
    dir,
    state,
    fake,
    runtime,
    studio,
    /** fetch with the token cookie. */
    get: (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${studio.port}${path}`, {
        ...init,
        headers: {
          cookie: studio.cookie,
          ...(init.headers as Record<string, string>),
        },
      }),
    post: (path: string, body: unknown) =>
      fetch(`http://127.0.0.1:${studio.port}${path}`, {
        method: 'POST',
        headers: {
          cookie: studio.cookie,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      }),
    /** GET, the JSON body. */
    json: async (path: string): Promise<Frame['data']> =>
      (
        await fetch(`http://127.0.0.1:${studio.port}${path}`, {
          headers: { cookie: studio.cookie },
        })
      ).json(),
    close: async () => {
      await studio.close();
      await runtime.close();
      await fake.close();
    },
  };
}

/** A raw HTTP request (any Host header, any path, unnormalised); resolves with status and body. */
export function raw(
  port: number,
  opts: { path: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: opts.path, method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** One server-sent event: its type and its JSON data, read loosely (tests look at a few fields). */
// biome-ignore lint/suspicious/noExplicitAny: payloads of several shapes, checked by the assertions
export type Frame = { type: string; data: any };

/** The studio's event stream: every frame read so far, and a wait for one that matches. */
export function events(studio: Studio) {
  const frames: Frame[] = [];
  let text = '';
  let wake: (() => void) | undefined;
  const req = request({
    host: '127.0.0.1',
    port: studio.port,
    path: '/api/events',
    headers: { cookie: studio.cookie, host: `127.0.0.1:${studio.port}` },
  });
  const open = new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        let i = text.indexOf('\n\n');
        while (i >= 0) {
          const frame = text.slice(0, i);
          text = text.slice(i + 2);
          const type = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (type && data) frames.push({ type, data: JSON.parse(data) });
          i = text.indexOf('\n\n');
        }
        wake?.();
      });
      resolve();
    });
    req.on('error', reject);
  });
  req.end();
  return {
    frames,
    /** Everything received, as text (for the secret check). */
    all: () => JSON.stringify(frames),
    open,
    async waitFor(pred: (f: Frame) => boolean, ms = 10_000): Promise<Frame> {
      const end = Date.now() + ms;
      for (;;) {
        const hit = frames.find(pred);
        if (hit) return hit;
        if (Date.now() > end)
          throw new Error(`no matching event in ${JSON.stringify(frames).slice(0, 2000)}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 100);
        });
      }
    },
    close: () => req.destroy(),
  };
}
