/**
 * The sampling provider on SDK v2: a client that never answers a sampling request ends in a TIMEOUT
 * error saying so (v2's timeout has a string code where v1's had -32001), and a refusal is a PROVIDER
 * error quoting the client. A real v2 server and client, linked in memory.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { createSamplingProvider } from '../../src/providers/sampling.js';
import type { ChatRequest } from '../../src/providers/types.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A v2 server connected to a client whose sampling handler is `answer`. */
async function linked(answer: () => Promise<never>): Promise<Server> {
  const server = new Server({ name: 's', version: '1' }, { capabilities: {} });
  const client = new Client({ name: 'c', version: '1' }, { capabilities: { sampling: {} } });
  client.setRequestHandler('sampling/createMessage', answer);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return server;
}

const request = (timeoutMs: number): ChatRequest => ({
  model: '',
  system: 's',
  messages: [{ role: 'user', content: 'hi' }],
  timeoutMs,
  signal: new AbortController().signal,
});

describe('sampling provider on SDK v2', () => {
  it('reports a client that never answers as a TIMEOUT naming the wait', async () => {
    const server = await linked(() => new Promise<never>(() => {}));
    const provider = createSamplingProvider({
      createMessage: (params, options) => server.createMessage(params, options),
    });
    const err = (await provider.chat(request(150)).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toBe("the MCP client's model (sampling) did not answer within 0 s");
  });

  it("reports a refusal as a PROVIDER error quoting the client's message", async () => {
    const server = await linked(async () => {
      throw new Error('User rejected sampling request');
    });
    const provider = createSamplingProvider({
      createMessage: (params, options) => server.createMessage(params, options),
    });
    const err = (await provider.chat(request(5000)).catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toMatch(/sampling\) failed: .*User rejected sampling request/);
  });
});
