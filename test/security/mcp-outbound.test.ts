/** The one gate of what the MCP server sends: redaction and size caps, on texts and structured values. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { secretRedactor } from '../../src/core/secrets.js';
import { OutboundGuard } from '../../src/mcp/outbound.js';
import { OutputStore } from '../../src/mcp/outputs.js';

const SECRET = 'sk-live-abcdefghijklmnop';
const guard = (max = 4096) =>
  new OutboundGuard(secretRedactor({ API_KEY: SECRET }), { maxResultBytes: max }, new OutputStore());

describe('OutboundGuard', () => {
  it('returns small results as they are', () => {
    const r: CallToolResult = {
      content: [{ type: 'text', text: '{"a":["b",1]}' }],
      structuredContent: { a: ['b', 1] },
    };
    expect(guard().result(r)).toBe(r);
  });

  it('redacts strings and keys anywhere in structured content, copying only what changed', () => {
    const shared = { untouched: ['x'] };
    const value = { deep: [{ [SECRET]: `key ${SECRET}` }], shared };
    const out = guard().value(value)!;
    expect(out).toEqual({ deep: [{ '[redacted]': 'key [redacted]' }], shared: { untouched: ['x'] } });
    expect(out.shared).toBe(shared);
    expect(value.deep[0]).toEqual({ [SECRET]: `key ${SECRET}` });
  });

  it('shortens the longest strings of a structured value that is too large, evenly', () => {
    const out = guard(3000).value({ big: 'a'.repeat(100_000), other: 'b'.repeat(5_000), small: 'c' })!;
    expect(out.small).toBe('c');
    expect(out.big).toMatch(/^a+… \(\d+ more characters\)$/);
    expect(out.other).toMatch(/^b+… \(\d+ more characters\)$/);
    expect(out.big.length + out.other.length).toBeLessThan(1_200);
    // Too many elements to fit at all: the caller drops it.
    expect(guard(3000).value(Array.from({ length: 10_000 }, () => 'x'))).toBeUndefined();
  });

  it('cuts a long multi-byte text on a character boundary, and a cut result passes again unchanged', () => {
    const g = guard(4096);
    // The text path: the error of a tool with an output schema has no structured content.
    const r = g.result(
      { content: [{ type: 'text', text: `${'é'.repeat(10_000)}${SECRET}` }] },
      { schema: true },
    );
    const text = (r.content[0] as { text: string }).text;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4096);
    expect(text).toMatch(/^é+\n\n\[output truncated: 20 KB in all/);
    expect(text).not.toContain('\uFFFD');
    expect(r.content[1]).toMatchObject({ type: 'resource_link', mimeType: 'text/plain' });
    expect(g.result(r)).toBe(r);
  });

  it('caps log and error texts after redacting them', () => {
    expect(guard().text(`${SECRET} ${'z'.repeat(100)}`, 40)).toBe(
      `[redacted] ${'z'.repeat(29)}… (71 bytes more)`,
    );
  });
});
