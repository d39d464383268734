/**
 * An ask node's schema with the choice shapes of MCP 2025-11-25 forms (SEP-1330: titled and untitled
 * single and multi selects, legacy enumNames) reaches the client as that form, and the answer comes
 * back as JSON; a shape a form cannot show is asked as one JSON text field instead.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { hatcheryDir, inMemory, ROOT, textOf, writeHatchery } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const ENUMS_FILE = path.join(ROOT, 'test/conformance/hatchery/test_elicitation_sep1330_enums.json');

async function setup(dir: string, answer: (p: ElicitRequestFormParams) => ElicitResult) {
  const asked: ElicitRequestFormParams[] = [];
  const s = await inMemory(dir, {
    client: { capabilities: { elicitation: { form: {} } } },
    setup: (c) =>
      c.setRequestHandler(ElicitRequestSchema, (req) => {
        const p = req.params as ElicitRequestFormParams;
        asked.push(p);
        return answer(p);
      }),
  });
  cleanups.push(s.close);
  return { ...s, asked };
}

/** A one-question hatchery whose answer must match `schema`. */
function askWith(schema: Record<string, unknown>) {
  return {
    name: 'choose',
    desc: 'asks with a form',
    nodes: [
      { name: 'Ask', type: 'ask', question: 'Choose', schema, next: 'Say' },
      { name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: 'got {{ out.Ask }}' } },
    ],
  };
}

describe('ask forms with choices', () => {
  it('sends the five SEP-1330 enum shapes as they are, and takes the arrays of a multi-select back', async () => {
    const dir = hatcheryDir();
    const def = JSON.parse(readFileSync(ENUMS_FILE, 'utf8'));
    writeHatchery(dir, 'enums.json', def);
    const content = {
      untitledSingle: 'option1',
      titledSingle: 'value2',
      legacyEnum: 'opt3',
      untitledMulti: ['option1', 'option3'],
      titledMulti: ['value1'],
    };
    const { client, asked } = await setup(dir, () => ({ action: 'accept', content }));
    const r = await client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(asked[0]?.requestedSchema).toEqual({ type: 'object', properties: def.nodes[0].schema.properties });
    expect(textOf(r)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify(content)}`);
  });

  it('a choice outside a multi-select is not taken as the answer', async () => {
    const dir = hatcheryDir();
    const schema = {
      type: 'object',
      properties: { picks: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } },
      required: ['picks'],
    };
    writeHatchery(dir, 'choose.json', askWith(schema));
    const { client, asked } = await setup(dir, () => ({
      action: 'accept',
      content: { picks: ['a', 'zzz'] },
    }));
    const r = await client.callTool({ name: 'choose', arguments: {} });
    // Not taken: the run does not go on with it (the answer is checked against the node's schema).
    expect(r.isError).toBe(true);
    expect(textOf(r)).not.toContain('got');
    expect(asked[0]?.requestedSchema.properties.picks).toEqual(schema.properties.picks);
  });

  it('shapes a form cannot show become one JSON text field', async () => {
    for (const picks of [
      // A titled choice with more than const and title.
      { type: 'string', oneOf: [{ const: 'a', title: 'A', description: 'x' }] },
      // Labels that do not match the values one to one.
      { type: 'string', enum: ['a', 'b'], enumNames: ['A'] },
      // oneOf next to enum: which one holds?
      { type: 'string', enum: ['a'], oneOf: [{ const: 'a' }] },
      // An array of objects, of numbers, and one with an unknown keyword.
      { type: 'array', items: { type: 'object' } },
      { type: 'array', items: { type: 'number', enum: [1, 2] } },
      { type: 'array', items: { type: 'string', enum: ['a'] }, uniqueItems: true },
      { type: 'array', items: { type: 'string', enum: ['a'] }, default: [1] },
    ]) {
      const dir = hatcheryDir();
      writeHatchery(dir, 'choose.json', askWith({ type: 'object', properties: { picks } }));
      const { client, asked } = await setup(dir, () => ({ action: 'cancel' }));
      await client.callTool({ name: 'choose', arguments: {} });
      expect(Object.keys(asked[0]?.requestedSchema.properties ?? {}), JSON.stringify(picks)).toEqual([
        'answer',
      ]);
    }
  });
});
