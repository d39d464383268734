import type { IncomingMessage } from 'node:http';
import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { parseHttpAddress } from '../../src/cli/serve.js';
import { secretRedactor } from '../../src/core/secrets.js';
import { allowedHostnames, bearerChecker } from '../../src/mcp/http-guard.js';
import { Limiter } from '../../src/mcp/limiter.js';
import { annotationsFor } from '../../src/mcp/tool-defs.js';
import {
  createSamplingProvider,
  toSamplingMessages,
  toSamplingParams,
} from '../../src/providers/sampling.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { hatch, load } from '../helpers.js';

function req(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

const signal = new AbortController().signal;

describe('serve helpers', () => {
  it('parses --http [host:]port', () => {
    expect(parseHttpAddress('3000')).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(parseHttpAddress('0.0.0.0:8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseHttpAddress('[::1]:9')).toEqual({ host: '::1', port: 9 });
    expect(parseHttpAddress('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    expect(() => parseHttpAddress('70000')).toThrow(/\[host:\]port/);
    expect(() => parseHttpAddress('host:')).toThrow(/\[host:\]port/);
  });

  it('checks Host, Origin and the bearer token', () => {
    // The names serveHttp hands the SDK's Host and Origin guards.
    const allowed = allowedHostnames('127.0.0.1');
    const host = (h: string | undefined) => validateHostHeader(h, allowed).ok;
    const origin = (o: string | undefined) => validateOriginHeader(o, allowed).ok;
    expect(['127.0.0.1:3000', 'localhost:3000', '[::1]:3000', 'LOCALHOST'].map(host)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect([host('attacker.example:3000'), host(undefined)]).toEqual([false, false]);
    expect([origin(undefined), origin('http://localhost:5173')]).toEqual([true, true]);
    expect([origin('https://attacker.example'), origin('null')]).toEqual([false, false]);
    expect(allowedHostnames('192.168.1.5')).toContain('192.168.1.5');
    expect(allowedHostnames('127.0.0.1', ['Proxy.Example'])).toContain('proxy.example');
    const check = bearerChecker('secret-token')!;
    expect(check(req({ authorization: 'Bearer secret-token' }))).toBe(true);
    expect(check(req({ authorization: 'bearer secret-token' }))).toBe(true);
    expect(check(req({ authorization: 'Bearer wrong' }))).toBe(false);
    expect(check(req({}))).toBe(false);
    expect(bearerChecker(undefined)).toBeUndefined();
  });

  it('limits concurrency in arrival order and lets queued callers leave on abort', async () => {
    const limiter = new Limiter(1);
    const release = await limiter.acquire(signal);
    const order: number[] = [];
    const second = limiter.acquire(signal).then((r) => {
      order.push(2);
      return r;
    });
    const gone = new AbortController();
    const third = limiter.acquire(gone.signal);
    const fourth = limiter.acquire(signal).then((r) => {
      order.push(4);
      return r;
    });
    expect(limiter.queued).toBe(3);
    gone.abort();
    await expect(third).rejects.toThrow(/cancelled while it waited/);
    release();
    (await second)();
    (await fourth)();
    expect(order).toEqual([2, 4]);
    expect(limiter.active).toBe(0);
  });

  it('redacts secrets from the environment and extra values', () => {
    const redact = secretRedactor({ OPENAI_API_KEY: 'sk-abcdefgh12345', SHORT_KEY: 'abc', HOME: '/home/x' }, [
      'bearer-token-xyz',
    ]);
    expect(redact('key sk-abcdefgh12345 and bearer-token-xyz at /home/x abc')).toBe(
      'key [redacted] and [redacted] at /home/x abc',
    );
  });

  it('annotates what is known: models reach out, echo only reads', () => {
    expect(annotationsFor(load(hatch([{ usr_prompt: 'x' }])))).toMatchObject({
      openWorldHint: true,
      readOnlyHint: true,
    });
    expect(
      annotationsFor(load(hatch([{ type: 'tool', tool_name: 'echo', tool_args: { text: 'x' } }]))),
    ).toMatchObject({
      openWorldHint: false,
      readOnlyHint: true,
      destructiveHint: false,
    });
    expect(
      annotationsFor(
        load(hatch([{ type: 'tool', tool_name: 'write_file', tool_args: { path: 'a', content: 'b' } }])),
      ),
    ).toMatchObject({ openWorldHint: false, readOnlyHint: false });
    expect(annotationsFor(load(hatch([{ usr_prompt: 'x', tools: ['http_request'] }])))).toMatchObject({
      openWorldHint: true,
      readOnlyHint: false,
    });
  });
});

describe('sampling provider', () => {
  const base: ChatRequest = { model: '', system: 'sys', messages: [{ role: 'user', content: 'hi' }], signal };

  it('maps a chat request to sampling parameters', () => {
    const p = toSamplingParams(
      { ...base, model: 'claude-x', maxTokens: 12, temperature: 0.2 },
      { createMessage: async () => ({}) as never },
    );
    expect(p).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
      systemPrompt: 'sys',
      maxTokens: 12,
      includeContext: 'none',
      temperature: 0.2,
      modelPreferences: { hints: [{ name: 'claude-x' }] },
    });
    const structured = toSamplingParams(
      { ...base, responseSchema: { name: 'o', schema: { type: 'object' } } },
      { createMessage: async () => ({}) as never },
    );
    expect(structured.systemPrompt).toMatch(/^sys\n\nReply with only a JSON value.*\{"type":"object"\}$/s);
  });

  it('merges tool results into one user turn and refuses tools without sampling.tools', () => {
    const msgs = toSamplingMessages([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'echo', args: { text: '1' } },
          { id: 'b', name: 'echo', args: { text: '2' } },
        ],
      },
      { role: 'tool', toolCallId: 'a', name: 'echo', content: '1' },
      { role: 'tool', toolCallId: 'b', name: 'echo', content: 'bad', isError: true },
    ]);
    expect(msgs).toHaveLength(3);
    expect(msgs[1]!.content).toEqual([
      { type: 'tool_use', id: 'a', name: 'echo', input: { text: '1' } },
      { type: 'tool_use', id: 'b', name: 'echo', input: { text: '2' } },
    ]);
    expect(msgs[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: 'a', content: [{ type: 'text', text: '1' }] },
        { type: 'tool_result', toolUseId: 'b', content: [{ type: 'text', text: 'bad' }], isError: true },
      ],
    });
    const tools = [{ name: 'echo', description: 'e', inputSchema: { type: 'object' } }];
    expect(() => toSamplingParams({ ...base, tools }, { createMessage: async () => ({}) as never })).toThrow(
      /does not support tool use/,
    );
    const p = toSamplingParams(
      { ...base, tools, toolChoice: { name: 'echo' } },
      {
        createMessage: async () => ({}) as never,
        supportsTools: true,
      },
    );
    expect(p.toolChoice).toEqual({ mode: 'required' });
  });

  it('reads text and tool calls back, and names the client in errors', async () => {
    const ok = createSamplingProvider({
      createMessage: async () => ({
        model: 'm',
        role: 'assistant',
        content: [
          { type: 'text', text: 'let me see' },
          { type: 'tool_use', id: 't1', name: 'echo', input: { text: 'x' } },
        ],
        stopReason: 'toolUse',
      }),
    });
    expect(await ok.chat(base)).toEqual({
      text: 'let me see',
      toolCalls: [{ id: 't1', name: 'echo', args: { text: 'x' } }],
      usage: { inputTokens: 0, outputTokens: 0 },
      stopReason: 'toolUse',
    });
    const failing = createSamplingProvider({
      createMessage: async () => {
        throw new Error('User rejected sampling request');
      },
    });
    await expect(failing.chat(base)).rejects.toThrow(/MCP client's model \(sampling\) failed: User rejected/);
  });
});
