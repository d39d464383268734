/** The guarded stdio transport: no message over the limit leaves, and none coming in ends the session. */
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { GuardedStdioServerTransport } from '../../src/mcp/stdio.js';

function setup(max = 1000) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: string[] = [];
  stdout.on('data', (b) => written.push(String(b)));
  const t = new GuardedStdioServerTransport(stdin, stdout, { maxMessageBytes: max });
  const received: JSONRPCMessage[] = [];
  const errors: string[] = [];
  t.onmessage = (m) => received.push(m);
  t.onerror = (e) => errors.push(e.message);
  let closed = false;
  t.onclose = () => {
    closed = true;
  };
  return { t, stdin, stdout, written, received, errors, closed: () => closed };
}

const tick = () => new Promise((r) => setImmediate(r));
const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('GuardedStdioServerTransport', () => {
  it('answers an oversized response with an error response of the same id', async () => {
    const s = setup();
    await s.t.start();
    await s.t.send({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'x'.repeat(5000) }] },
    });
    await tick();
    const sent = JSON.parse(s.written.join(''));
    expect(sent).toMatchObject({ id: 7, error: { code: -32603 } });
    expect(sent.error.message).toMatch(/the server's answer \(5 KB\) is over the limit of 1 KB per message/);
    // A notification too large is refused (and reported), not written.
    await expect(
      s.t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'y'.repeat(5000) } }),
    ).rejects.toThrow(/notifications\/message not sent/);
    expect(s.errors.some((e) => e.includes('not sent'))).toBe(true);
  });

  it('skips an oversized client message arriving in pieces, answers it, and reads the next one', async () => {
    const s = setup();
    await s.t.start();
    const big = JSON.stringify({
      method: 'tools/call',
      params: { x: 'z'.repeat(3000) },
      jsonrpc: '2.0',
      id: 42,
    });
    s.stdin.write(big.slice(0, 1200));
    s.stdin.write(big.slice(1200, 2500));
    s.stdin.write(`${big.slice(2500)}\n${JSON.stringify({ jsonrpc: '2.0', id: 43, method: 'ping' })}\n`);
    await tick();
    await tick();
    expect(s.received).toEqual([{ jsonrpc: '2.0', id: 43, method: 'ping' }]);
    const answer = JSON.parse(s.written.join(''));
    expect(answer).toMatchObject({ id: 42, error: { code: -32600 } });
    expect(answer.error.message).toMatch(/a client message of 3 KB was skipped/);
    expect(s.closed()).toBe(false);
  });

  it('reads a burst of messages from one chunk, CRLF and blank lines too, with one over the limit skipped', async () => {
    const s = setup();
    await s.t.start();
    const big = JSON.stringify({ jsonrpc: '2.0', id: 500, method: 'ping', params: { x: 'z'.repeat(2000) } });
    const lines = [];
    for (let i = 1; i <= 300; i++) lines.push(i % 7 === 0 ? `${ping(i)}\r` : ping(i));
    lines.splice(150, 0, '', big, '  ');
    const text = `${lines.join('\n')}\n${ping(301).slice(0, 10)}`;
    // One chunk with 300 messages, the last one cut: its end comes with the next chunk.
    s.stdin.write(text);
    await tick();
    expect(s.received).toHaveLength(300);
    s.stdin.write(`${ping(301).slice(10)}\n`);
    await tick();
    expect(s.received.map((m) => (m as { id: number }).id)).toEqual(
      Array.from({ length: 301 }, (_, i) => i + 1),
    );
    expect(s.errors).toEqual([expect.stringMatching(/a client message of 2 KB was skipped/)]);
    expect(JSON.parse(s.written.join(''))).toMatchObject({ id: 500, error: { code: -32600 } });
  });

  it('hands over nothing more once a handler closed the transport', async () => {
    const s = setup(100_000);
    const ids: number[] = [];
    s.t.onmessage = (m) => {
      ids.push((m as { id: number }).id);
      if (ids.length === 2) void s.t.close();
    };
    await s.t.start();
    s.stdin.write(`${[1, 2, 3, 4].map(ping).join('\n')}\n`);
    await tick();
    await tick();
    expect(ids).toEqual([1, 2]);
    expect(s.closed()).toBe(true);
  });

  it('reports a handler that throws on a message, and goes on with the next', async () => {
    const s = setup(100_000);
    const ids: number[] = [];
    s.t.onmessage = (m) => {
      const id = (m as { id: number }).id;
      if (id === 2) throw new Error('handler failed on 2');
      ids.push(id);
    };
    await s.t.start();
    s.stdin.write(`${[1, 2, 3].map(ping).join('\n')}\n`);
    await tick();
    expect(ids).toEqual([1, 3]);
    expect(s.errors).toEqual(['handler failed on 2']);
  });

  it('writes the messages of one turn together, in order, and what was sent before close', async () => {
    const s = setup(100_000);
    const writes: string[] = [];
    const write = s.stdout.write.bind(s.stdout);
    s.stdout.write = ((chunk: string) => {
      writes.push(chunk);
      return write(chunk);
    }) as typeof s.stdout.write;
    await s.t.start();
    const sent = [1, 2, 3].map((id) => s.t.send({ jsonrpc: '2.0', id, result: {} }));
    await Promise.all(sent);
    expect(writes).toHaveLength(1);
    expect(
      writes[0]!
        .split('\n')
        .slice(0, 3)
        .map((l) => JSON.parse(l).id),
    ).toEqual([1, 2, 3]);
    // Sent, then closed in the same turn: still written.
    void s.t.send({ jsonrpc: '2.0', id: 4, result: {} });
    await s.t.close();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!).id).toBe(4);
    // After close nothing more is written.
    await s.t.send({ jsonrpc: '2.0', id: 5, result: {} });
    await tick();
    expect(writes).toHaveLength(2);
  });

  it('reports a broken stdout instead of crashing', async () => {
    const s = setup();
    await s.t.start();
    s.stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(s.errors).toContain('write EPIPE');
  });
});
