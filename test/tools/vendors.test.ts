import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../src/runtime/runtime.js';
import type { FakeReply, WireBody } from '../fakes/http.js';
import { fakeVendors } from '../fakes/vendors.js';
import { tempDir } from '../helpers.js';
import { echoServer, loadIn } from './helpers.js';

// Every kind of tool reference, through both vendors' real tool-call wire formats, streaming and not:
// a drone calls a hatch: tool (whose own drone calls a node: tool), an MCP server's tool, a js: tool
// and a built-in, all in one turn, then answers with what they returned.

const { openai, anthropic } = fakeVendors();

/** The system prompt and the tool results of a request body, in either vendor's format. */
function read(body: WireBody): { system: string; results: string[] } {
  if (Array.isArray(body.messages) && body.messages[0]?.role === 'system') {
    const results = body.messages
      .filter((m: WireBody) => m.role === 'tool')
      .map((m: WireBody) => String(m.content));
    return { system: body.messages[0].content, results };
  }
  const system =
    typeof body.system === 'string' ? body.system : (body.system ?? []).map((b: WireBody) => b.text).join('');
  const results: string[] = [];
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      results.push(
        typeof b.content === 'string' ? b.content : b.content.map((c: WireBody) => c.text).join(''),
      );
    }
  }
  return { system, results };
}

/** Both drones' model: call the tools on the first turn, report the results on the second. */
function reply(body: WireBody): FakeReply {
  const { system, results } = read(body);
  if (system === 'Sub.') {
    if (results.length === 0) return { toolCalls: [{ name: 'Shout', args: { input: 'from sub' } }] };
    return { text: `sub got ${results.join(',')}` };
  }
  if (results.length === 0) {
    return {
      toolCalls: [
        { name: 'helper_flow', args: { input: 'please' } },
        { name: 'echo', args: { text: 'via mcp' } },
        { name: 'add', args: { a: 2, b: 3 } },
        { name: 'read_file', args: { path: 'note.txt' } },
      ],
    };
  }
  return { text: `main got ${[...results].sort().join(' | ')}` };
}

function files(dir: string, model: string) {
  writeFileSync(path.join(dir, 'note.txt'), 'a note');
  writeFileSync(
    path.join(dir, 'math.mjs'),
    `export const addSchema = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
export function add({ a, b }) { return 'sum ' + (a + b); }
`,
  );
  loadIn(
    dir,
    {
      name: 'helper_flow',
      desc: 'A sub-workflow',
      model,
      nodes: [
        { name: 'Sub', sys_prompt: 'Sub.', usr_prompt: '{{ ctx.input }}', tools: ['node:Shout'] },
        { name: 'Shout', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input | upper }}' } },
      ],
    },
    'sub.json',
  );
}

describe.each([
  ['openai', false],
  ['openai', true],
  ['anthropic', false],
  ['anthropic', true],
] as const)('every tool reference through %s (stream: %s)', (vendor, stream) => {
  it('runs the tools the model asks for and feeds their results back in the vendor format', async () => {
    const fake = vendor === 'openai' ? openai : anthropic;
    fake.reset();
    fake.enqueue(reply, reply, reply, reply);
    const dir = tempDir();
    const model = vendor === 'openai' ? 'openai:gpt-test' : 'anthropic:claude-test';
    files(dir, model);
    const h = loadIn(dir, {
      name: 'main',
      desc: 'calls every kind of tool',
      model,
      mcpServers: { fixture: echoServer() },
      nodes: [
        {
          name: 'Main',
          sys_prompt: 'Main.',
          usr_prompt: 'go',
          stream,
          tools: ['hatch:sub.json', 'mcp:fixture/echo', 'js:math.mjs#add', 'read_file'],
        },
      ],
    });
    const runtime = new Runtime({
      env: {
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: openai.baseURL,
        ANTHROPIC_API_KEY: 'test',
        ANTHROPIC_BASE_URL: anthropic.baseURL,
      },
    });
    try {
      const res = await runtime.run(h);
      expect(res.output).toBe('main got a note | sub got FROM SUB | sum 5 | via mcp');
      expect(fake.requests).toHaveLength(4);
      expect(res.usage.inputTokens).toBeGreaterThan(0);
      const names = fake.requests[0]!.body.tools.map((t: WireBody) => t.function?.name ?? t.name).sort();
      expect(names).toEqual(['add', 'echo', 'helper_flow', 'read_file']);
    } finally {
      await runtime.close();
    }
  });
});
