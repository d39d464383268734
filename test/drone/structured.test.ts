import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, problems } from '../helpers.js';

const schema = {
  type: 'object',
  properties: { title: { type: 'string' }, score: { type: 'number' } },
  required: ['title', 'score'],
};

const def = hatch([
  { name: 'Rate', usr_prompt: 'Rate {{ ctx.input }}', output_schema: schema, next: 'Show' },
  {
    name: 'Show',
    type: 'tool',
    tool_name: 'echo',
    tool_args: { text: '{{ out.Rate.title }} = {{ out.Rate.score }}' },
  },
]);

describe('structured output (output_schema)', () => {
  it('asks for the schema, parses the reply and exposes its fields to templates', async () => {
    const model = new ScriptedProvider(['```json\n{"title": "Dune", "score": 9}\n```']);
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(load(def), {
      input: 'Dune',
    });
    expect(res.output).toBe('Dune = 9');
    expect(res.outputs.Rate).toEqual({ title: 'Dune', score: 9 });
    expect(model.calls[0]!.responseSchema).toEqual({ name: 'Rate_output', schema });
  });

  it('retries once with the validation errors, then fails naming the field', async () => {
    const fixed = new ScriptedProvider(['{"title": "Dune"}', '{"title": "Dune", "score": 8}']);
    expect(
      (await new Runtime({ providers: { openai: fixed }, env: {} }).run(load(def), { input: 'Dune' })).output,
    ).toBe('Dune = 8');
    expect(fixed.calls[1]!.messages.at(-1)?.content).toContain('score');

    const broken = new ScriptedProvider(['not json', '{"title": 3}']);
    await expect(
      new Runtime({ providers: { openai: broken }, env: {} }).run(load(def), { input: 'Dune' }),
    ).rejects.toMatchObject({
      code: 'OUTPUT_SCHEMA',
      context: { node: 'Rate', field: 'output_schema' },
    });
  });

  it("makes the final node's schema the hatchery's output schema and the parsed value the result", async () => {
    const h = load(hatch([{ name: 'Rate', usr_prompt: 'x', output_schema: schema }]));
    expect(h.outputSchema).toEqual(schema);
    const res = await new Runtime({
      providers: { openai: new ScriptedProvider(['{"title":"A","score":1}']) },
      env: {},
    }).run(h);
    expect(res.value).toEqual({ title: 'A', score: 1 });
    expect(res.output).toBe('{"title":"A","score":1}');
  });

  it('ignores schemas of branch bodies and of runs with several end nodes', () => {
    const fanout = load(
      hatch([
        { name: 'Fan', type: 'parallel', branches: ['Worker'], next: 'Final' },
        { name: 'Worker', usr_prompt: 'x', output_schema: schema },
        { name: 'Final', usr_prompt: 'y' },
      ]),
    );
    expect(fanout.outputSchema).toBeUndefined();
    const twoEnds = load(
      hatch([
        { name: 'Route', usr_prompt: 'x', next: ['A', 'B'] },
        { name: 'A', usr_prompt: 'a', output_schema: schema },
        { name: 'B', usr_prompt: 'b' },
      ]),
    );
    expect(twoEnds.outputSchema).toBeUndefined();
  });

  it('refuses a schema that is not a JSON Schema at load time', () => {
    expect(problems(hatch([{ usr_prompt: 'x', output_schema: { type: 'banana' } }]))[0]).toMatch(
      /^nodes\/0\/output_schema: not a usable JSON Schema/,
    );
  });
});

describe('hatchery/outline-expand.json', () => {
  it('plans with structured output, writes the sections through a map, and continues the plan conversation', async () => {
    const { loadHatchery } = await import('../../src/loader/load.js');
    const h = await loadHatchery(new URL('../../hatchery/outline-expand.json', import.meta.url).pathname);
    const model = new ScriptedProvider((req) => {
      const user = String(req.messages.at(-1)?.content);
      if (req.responseSchema) return '{"title": "Tides", "sections": ["Moon", "Sun"]}';
      if (user.startsWith('Write the section')) return `text of ${user.split('"')[1]}`;
      if (user.startsWith('Now write a two-sentence')) return `intro after ${req.messages.length} messages`;
      throw new Error(`unexpected prompt: ${user}`);
    });
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(h, { input: 'tides' });
    expect(res.output).toBe(
      '# Tides\n\nintro after 3 messages\n\n## Moon\n\ntext of Moon\n\n## Sun\n\ntext of Sun\n',
    );
  });
});
