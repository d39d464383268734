import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest, ChatResponse } from '../../src/providers/types.js';
import { EXAMPLES, hatcheryDir, inMemory, textOf, writeHatchery } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Plays every role of hatchery/research-team.json, recording how many researchers ran at once. */
function team() {
  let inFlight = 0;
  let maxInFlight = 0;
  let drafts = 0;
  let critiques = 0;
  const provider = new ScriptedProvider(async (req: ChatRequest): Promise<string | Partial<ChatResponse>> => {
    const last = req.messages.at(-1);
    if (req.system.startsWith('You lead a research team')) {
      if (req.toolChoice && typeof req.toolChoice === 'object') {
        return { text: '', toolCalls: [{ id: 'c1', name: 'choose_next', args: { next: 'Research' } }] };
      }
      return 'This needs fresh research.';
    }
    if (req.system.startsWith('You coordinate researchers')) {
      if (last?.role === 'tool') return `Findings: ${last.content}`;
      return {
        text: '',
        toolCalls: [
          {
            id: 's1',
            name: 'spawn_agents_parallel',
            args: {
              tasks: [
                { template: 'researcher', task: 'When was the lighthouse built?' },
                { template: 'researcher', task: 'Who kept it?' },
              ],
            },
          },
        ],
      };
    }
    if (req.system.startsWith('You are a focused researcher')) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 30));
      inFlight--;
      return `fact about: ${last?.role === 'user' ? last.content : ''}`;
    }
    if (req.system.startsWith('You write')) return `draft v${++drafts}`;
    if (req.system.startsWith('You are a demanding critic'))
      return ++critiques < 2 ? 'Add dates.' : 'APPROVED';
    throw new Error(`unexpected system prompt: ${req.system}`);
  });
  return { provider, maxInFlight: () => maxInFlight };
}

describe('research_team: supervisor, parallel spawned agents and a refine loop, through the MCP server', () => {
  it('runs end to end as an MCP tool call', async () => {
    const dir = hatcheryDir();
    copyFileSync(path.join(EXAMPLES, 'research-team.json'), path.join(dir, 'research-team.json'));
    const { provider, maxInFlight } = team();
    const s = await inMemory(dir, { providers: { openai: provider } });
    close = s.close;
    const progress: string[] = [];
    const result = await s.client.callTool(
      { name: 'research_team', arguments: { input: 'Tell me about the old lighthouse.' } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? '') },
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('draft v2');
    expect(maxInFlight()).toBe(2);
    const writer = provider.calls.filter((c) => c.system.startsWith('You write'));
    expect(writer[0]!.messages[0]!.content).toContain('fact about: When was the lighthouse built?');
    expect(writer[1]!.messages[0]!.content).toContain('Add dates.');
    expect(progress.some((m) => m.includes('Research'))).toBe(true);
    expect(progress.some((m) => m.includes('Critic'))).toBe(true);
  });
});

describe('structured output through the MCP server', () => {
  it("publishes the final node's output_schema as outputSchema and returns structuredContent", async () => {
    const dir = hatcheryDir();
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'number' } },
      required: ['city', 'population'],
    };
    writeHatchery(dir, 'city.json', {
      name: 'city_facts',
      desc: 'Facts about a city',
      nodes: [{ name: 'Facts', usr_prompt: '{{ ctx.input }}', output_schema: schema }],
    });
    const s = await inMemory(dir, {
      providers: { openai: new ScriptedProvider(['{"city":"Oslo","population":709000}']) },
    });
    close = s.close;
    const { tools } = await s.client.listTools();
    expect(tools.find((t) => t.name === 'city_facts')?.outputSchema).toMatchObject(schema);
    const result = await s.client.callTool({ name: 'city_facts', arguments: { input: 'Oslo' } });
    expect(result.structuredContent).toEqual({ city: 'Oslo', population: 709000 });
    expect(JSON.parse(textOf(result))).toEqual({ city: 'Oslo', population: 709000 });
  });
});
