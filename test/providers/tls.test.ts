/**
 * Model calls go over the platform fetch with Node's own TLS: a model endpoint whose certificate no
 * trusted authority signed is refused before any request reaches it, through the providers as the
 * runtime builds them (key, reply cap and all).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import { createOpenAIProvider } from '../../src/providers/openai.js';
import { chatRequest, failure } from './helpers.js';

const KEY = 'sk-test-TLS0123456789abcdef';
let dir = '';
let server: https.Server | undefined;
let requests = 0;
let base = '';

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hatchery-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  server = https.createServer(
    { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) },
    (_req, res) => {
      requests++;
      res.end('secret reply');
    },
  );
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['OpenAI', () => createOpenAIProvider({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 }), 'gpt-test'],
  ['Anthropic', () => createAnthropicProvider({ apiKey: KEY, baseURL: base, maxRetries: 0 }), 'claude-test'],
] as const)('%s over TLS', (_vendor, make, model) => {
  it('refuses a server whose certificate no trusted authority signed, sending it nothing', async () => {
    const err = await failure(make().chat(chatRequest(model)));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(err.message).not.toContain(KEY);
    expect(requests).toBe(0);
  });
});
