/**
 * Issue 8, secrets in structured results: every channel of the MCP server (text, structuredContent,
 * hatchery_status, hatchery_result, hatchery_list, tool and resource lists, resources, log
 * notifications, the instructions) goes through one redaction step, not only the text results.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { HatcheryMcpServer } from '../../src/mcp/server.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echoDef, hatcheryDir, textOf, waitFor, writeHatchery } from '../mcp/helpers.js';

const SECRET = 'sk-test-0123456789abcdefSECRET';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** A server whose environment holds the key, a connected client, and every message the client received. */
async function serve(dir: string) {
  const runtime = new Runtime({
    env: { OPENAI_API_KEY: SECRET },
    providers: { openai: new ScriptedProvider(() => ({ text: `{"key":"${SECRET}","n":1}` })) },
  });
  const core = await HatcheryMcpServer.start({ dir, runtime, debounceMs: 30, log: () => {} });
  const client = new Client({ name: 't', version: '1' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: string[] = [];
  const send = serverSide.send.bind(serverSide);
  // Everything the server sends, as it goes over the wire.
  serverSide.send = (m, o) => {
    received.push(JSON.stringify(m));
    return send(m, o);
  };
  await core.connect(serverSide);
  await client.connect(clientSide);
  await client.setLoggingLevel('debug');
  cleanup = async () => {
    await client.close();
    await core.close();
    await runtime.close();
  };
  return { core, client, received };
}

describe('one redaction step for every channel', () => {
  it('never sends the value of a secret environment variable, whatever the channel', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'leak.json', {
      ...echoDef('leak_echo', 'note: '),
      inputs: { note: 'a note' },
      nodes: [
        {
          name: 'Echo',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: 'note: {{ ctx.note }}' },
          save_output: 'first',
          next: 'Again',
        },
        { name: 'Again', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.first }}!' } },
      ],
    });
    writeHatchery(dir, 'struct.json', {
      name: 'leak_struct',
      desc: 'structured output',
      nodes: [
        {
          name: 'Facts',
          usr_prompt: '{{ ctx.input }}',
          output_schema: {
            type: 'object',
            properties: { key: { type: 'string' }, n: { type: 'number' } },
            required: ['key', 'n'],
          },
        },
      ],
    });
    writeHatchery(dir, 'desc.json', {
      ...echoDef('leak_desc'),
      desc: `Uses the key ${SECRET} to do things`,
      inputs: { who: `the owner of ${SECRET}` },
    });
    const { core, client, received } = await serve(dir);

    // Text and structuredContent of a direct call.
    const direct = await client.callTool({ name: 'leak_echo', arguments: { note: SECRET } });
    expect(textOf(direct)).toBe('note: [redacted]!');
    const structured = await client.callTool({ name: 'leak_struct', arguments: { input: 'go' } });
    expect(structured.structuredContent).toEqual({ key: '[redacted]', n: 1 });

    // hatchery_run, hatchery_start, hatchery_result and hatchery_status (text and structured).
    const run = await client.callTool({
      name: 'hatchery_run',
      arguments: { name: 'leak_struct', input: 'go' },
    });
    expect(run.structuredContent).toEqual({ key: '[redacted]', n: 1 });
    const started = await client.callTool({
      name: 'hatchery_start',
      arguments: { name: 'leak_echo', inputs: { note: SECRET } },
    });
    const runId = (started.structuredContent as { run_id: string }).run_id;
    const result = await client.callTool({ name: 'hatchery_result', arguments: { run_id: runId } });
    expect(textOf(result)).toBe('note: [redacted]!');
    const status = await client.callTool({ name: 'hatchery_status', arguments: { run_id: runId } });
    expect((status.structuredContent as { outputs: Record<string, string> }).outputs).toEqual({
      Echo: 'note: [redacted]',
      Again: 'note: [redacted]!',
    });

    // Descriptions: tools, resources, hatchery_list, the resource itself, the instructions.
    const tool = (await client.listTools()).tools.find((t) => t.name === 'leak_desc')!;
    expect(tool.description).toBe('Uses the key [redacted] to do things');
    expect(JSON.stringify(tool.inputSchema)).toContain('the owner of [redacted]');
    const resource = (await client.listResources()).resources.find((r) => r.name === 'leak_desc')!;
    expect(resource.description).toBe('Uses the key [redacted] to do things');
    const read = await client.readResource({ uri: resource.uri });
    expect(JSON.stringify(read)).toContain('Uses the key [redacted]');
    await client.callTool({ name: 'hatchery_list', arguments: {} });
    expect(client.getInstructions()).toContain('Uses the key [redacted]');

    // Logs: a broken file whose error quotes the secret.
    writeHatchery(dir, 'broken.json', {
      name: 'broken',
      desc: 'd',
      nodes: [{ name: 'N', type: 'tool', tool_name: SECRET }],
    });
    await core.reload([`${dir}/broken.json`]);
    await waitFor(() => received.some((m) => m.includes('notifications/message') && m.includes('broken')));
    const list = await client.callTool({ name: 'hatchery_list', arguments: {} });
    expect(JSON.stringify(list)).toContain('broken.json');

    const all = received.join('\n');
    expect(all).toContain('[redacted]');
    expect(all).not.toContain(SECRET);
  });
});
