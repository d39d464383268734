import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import { createOpenAIProvider } from '../../src/providers/openai.js';
import type { ChatRequest } from '../../src/providers/types.js';

const SERVE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fakes/serve.ts');
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill('SIGTERM');
});

/** Starts serve.ts and resolves with the JSON line it prints. */
function serve(...args: string[]): Promise<{ openai: string; anthropic: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SERVE, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child = proc;
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`serve.ts exited with ${code}`)));
    createInterface({ input: proc.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
  });
}

const request = (content: string): ChatRequest => ({
  model: 'm',
  system: '',
  messages: [{ role: 'user', content }],
  signal: new AbortController().signal,
});

describe('test/fakes/serve.ts', () => {
  it('serves both fakes from another process, with --latency-ms on default replies', async () => {
    const urls = await serve('--latency-ms', '100');
    const openai = createOpenAIProvider({ apiKey: 'k', baseURL: urls.openai });
    const anthropic = createAnthropicProvider({ apiKey: 'k', baseURL: urls.anthropic });
    const t0 = Date.now();
    const [a, b] = await Promise.all([openai.chat(request('ping')), anthropic.chat(request('pong'))]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(a.text).toBe('echo: ping');
    expect(b.text).toBe('echo: pong');

    // Control endpoints let the other process script replies and read what was sent.
    const root = urls.openai.replace(/\/v1$/, '');
    await fetch(`${root}/_fake/replies`, { method: 'POST', body: JSON.stringify(['scripted']) });
    expect((await openai.chat(request('x'))).text).toBe('scripted');
    const seen = (await (await fetch(`${root}/_fake/requests`)).json()) as {
      body: { messages: unknown[] };
    }[];
    expect(seen).toHaveLength(2);
    expect(seen[1]!.body.messages).toEqual([{ role: 'user', content: 'x' }]);
  });
});
