import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { hatcheryDir, inMemory, jsonOf, textOf, writeHatchery } from '../mcp/helpers.js';
import { pick } from './fixtures.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A server on `dir` and a real SDK client; with `answer`, the client handles elicitation with it. */
async function setup(dir: string, answer?: (p: ElicitRequestFormParams) => ElicitResult) {
  const asked: ElicitRequestFormParams[] = [];
  const s = await inMemory(dir, {
    client: answer ? { capabilities: { elicitation: { form: {} } } } : undefined,
    setup: answer
      ? (c) =>
          c.setRequestHandler(ElicitRequestSchema, (req) => {
            const p = req.params as ElicitRequestFormParams;
            asked.push(p);
            return answer(p);
          })
      : undefined,
  });
  cleanups.push(s.close);
  return { ...s, asked };
}

describe('ask over MCP', () => {
  it('asks through elicitation when the client supports it: choices become an enum, the answer completes the run', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', pick);
    const { client, asked } = await setup(dir, () => ({ action: 'accept', content: { answer: 'blue' } }));
    const r = await client.callTool({ name: 'pick', arguments: { input: 'the shed' } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('painted blue');
    expect(asked).toEqual([
      expect.objectContaining({
        message: 'Which colour for the shed?',
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', title: 'Answer', enum: ['red', 'blue'] } },
          required: ['answer'],
        },
      }),
    ]);
  });

  it('without elicitation the call returns INPUT_REQUIRED with the question, the run id and how to answer', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', pick);
    const { client } = await setup(dir);
    const r = await client.callTool({ name: 'pick', arguments: { input: 'the shed' } });
    expect(r.isError).toBe(true);
    const text = textOf(r);
    expect(text).toMatch(
      /^INPUT_REQUIRED: node "Pick" asks: Which colour for the shed\?\nchoices: red, blue\nrun id: [0-9a-f-]{36}\n/,
    );
    const runId = /run id: (\S+)/.exec(text)![1];
    expect(text).toContain(`hatchery_respond tool: {"run_id": "${runId}", "answer": "<your answer>"}`);
  });

  it('a declined or cancelled question fails the call with a clear error instead of hanging', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'pick.json', pick);
    for (const action of ['decline', 'cancel'] as const) {
      const { client } = await setup(dir, () => ({ action }));
      const r = await client.callTool({ name: 'pick', arguments: { input: 'x' } });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(
        new RegExp(
          `node "Pick": the user ${action === 'decline' ? 'declined' : 'cancelled'} the question "Which colour for x\\?"`,
        ),
      );
    }
  });

  it('a flat object schema is the form itself; the answer is its JSON, checked against the schema', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'size.json', {
      name: 'size',
      desc: 'asks for a size',
      nodes: [
        {
          name: 'Size',
          type: 'ask',
          question: 'How big?',
          schema: {
            type: 'object',
            properties: { w: { type: 'integer', minimum: 1 }, unit: { type: 'string', enum: ['cm', 'in'] } },
            required: ['w'],
          },
          next: 'Say',
        },
        {
          name: 'Say',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: '{{ out.Size.w }} {{ out.Size.unit }}' },
        },
      ],
    });
    const { client, asked } = await setup(dir, () => ({ action: 'accept', content: { w: 5, unit: 'cm' } }));
    const r = await client.callTool({ name: 'size', arguments: {} });
    expect(textOf(r)).toBe('5 cm');
    expect(asked[0]?.requestedSchema).toEqual({
      type: 'object',
      properties: { w: { type: 'integer', minimum: 1 }, unit: { type: 'string', enum: ['cm', 'in'] } },
      required: ['w'],
    });
  });

  it('a nested schema is asked as one JSON text field; a bad answer is asked again once, then the call fails', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'deep.json', {
      name: 'deep',
      desc: 'asks for a nested value',
      nodes: [
        {
          name: 'Deep',
          type: 'ask',
          question: 'Tags?',
          schema: {
            type: 'object',
            properties: { tags: { type: 'array', items: { type: 'string' } } },
            required: ['tags'],
          },
        },
      ],
    });
    const replies = ['{"tags": "one"}', '{"tags": ["a", "b"]}'];
    const { client, asked } = await setup(dir, () => ({
      action: 'accept',
      content: { answer: replies.shift()! },
    }));
    const r = await client.callTool({ name: 'deep', arguments: {} });
    // A structured final value is the result's output as it is, not its JSON text.
    expect(jsonOf(r).output).toEqual({ tags: ['a', 'b'] });
    expect(asked).toHaveLength(2);
    expect(asked[0]?.requestedSchema.properties.answer).toMatchObject({
      type: 'string',
      description: expect.stringMatching(/^JSON matching /),
    });
    expect(asked[1]?.message).toMatch(/^the answer does not match the schema: tags.*Tags\?$/s);

    const bad = await setup(dir, () => ({ action: 'accept', content: { answer: 'nope' } }));
    const r2 = await bad.client.callTool({ name: 'deep', arguments: {} });
    expect(r2.isError).toBe(true);
    expect(textOf(r2)).toMatch(/node "Deep": the answer is not JSON .*answer JSON matching the schema/);
  });

  it('approve: true asks before a script runs; declining runs nothing', async () => {
    const dir = hatcheryDir();
    const marker = path.join(dir, 'out', 'made.txt');
    writeHatchery(dir, 'touch.json', {
      name: 'touch',
      desc: 'creates a file',
      nodes: [{ name: 'Touch', type: 'script', cmd: ['touch', '{{ ctx.input }}'], approve: true }],
    });
    const { client, asked } = await setup(dir, () => ({ action: 'decline' }));
    const r = await client.callTool({ name: 'touch', arguments: { input: marker } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/node "Touch": the user declined the approval; nothing ran/);
    expect(asked[0]?.message).toMatch(/^Approve\? Node "Touch" wants to run \["touch",/);
    expect(asked[0]?.requestedSchema.properties.answer).toMatchObject({ enum: ['yes', 'no'] });
    expect(existsSync(marker)).toBe(false);
  });
});
