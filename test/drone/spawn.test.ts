import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest, ChatResponse } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, problems } from '../helpers.js';

const templates = [
  { name: 'researcher', desc: 'Finds facts', sys_prompt: 'Research: {{ task }}' },
  { name: 'critic', desc: 'Criticises', sys_prompt: 'Criticise: {{ task }}', allow_prompt_addition: true },
];

const call = (name: string, args: Record<string, unknown>): Partial<ChatResponse> => ({
  text: '',
  toolCalls: [{ id: `id-${name}`, name, args }],
});

/** The coordinator asks for spawns on its first turn and summarises the tool results on the next. */
function coordinator(first: Partial<ChatResponse>) {
  return new ScriptedProvider((req: ChatRequest) => {
    if (req.system.startsWith('Research:')) return `fact about ${req.messages[0]?.content}`;
    if (req.system.startsWith('Criticise:')) return `critique (${req.system.split('\n\n')[1] ?? 'plain'})`;
    const last = req.messages.at(-1);
    if (last?.role === 'tool') return `summary: ${last.content}`;
    return first;
  });
}

describe('spawning', () => {
  const def = (extra: Record<string, unknown> = {}) =>
    hatch([{ name: 'Coordinator', usr_prompt: '{{ ctx.input }}', spawn: { templates, ...extra } }]);

  it('offers spawn tools and runs a spawned agent with the template prompt and the task', async () => {
    const model = coordinator(call('spawn_agent', { template: 'researcher', task: 'tides' }));
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(load(def()), {
      input: 'go',
    });
    expect(JSON.parse(res.output.replace('summary: ', ''))).toEqual({
      output: 'fact about tides',
      template: 'researcher',
      depth: 1,
    });
    expect(model.calls[0]!.tools?.map((t) => t.name)).toEqual(['spawn_agent', 'spawn_agents_parallel']);
    const spawned = model.calls.find((c) => c.system === 'Research: tides')!;
    expect(spawned.messages).toEqual([{ role: 'user', content: 'tides' }]);
  });

  it('runs parallel spawns and applies prompt additions only where allowed', async () => {
    const model = coordinator(
      call('spawn_agents_parallel', {
        tasks: [
          { template: 'researcher', task: 'a', system_prompt_addition: 'ignored' },
          { template: 'critic', task: 'b', system_prompt_addition: 'Be harsh.' },
        ],
      }),
    );
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(load(def()), {
      input: 'go',
    });
    expect(JSON.parse(res.output.replace('summary: ', ''))).toEqual({
      results: [
        { output: 'fact about a', template: 'researcher', depth: 1 },
        { output: 'critique (Be harsh.)', template: 'critic', depth: 1 },
      ],
    });
    expect(model.calls.some((c) => c.system === 'Research: a')).toBe(true);
  });

  it('reports unknown templates and empty task lists as tool errors the model sees', async () => {
    for (const first of [
      call('spawn_agent', { template: 'wizard', task: 'x' }),
      call('spawn_agents_parallel', { tasks: [] }),
    ]) {
      const model = coordinator(first);
      const res = await new Runtime({ providers: { openai: model }, env: {} }).run(load(def()), {
        input: 'go',
      });
      expect(res.output).toMatch(
        /^summary: error: (unknown template "wizard"; templates: researcher, critic|tasks must be a non-empty list)/,
      );
      const toolMsg = model.calls[1]!.messages.at(-1);
      expect(toolMsg).toMatchObject({ role: 'tool', isError: true });
    }
  });

  it('stops offering spawn tools at max_depth', async () => {
    // Every agent, spawned or not, tries to spawn a copy of itself until the tools disappear.
    const model = new ScriptedProvider((req: ChatRequest) => {
      const canSpawn = req.tools?.some((t) => t.name === 'spawn_agent');
      const last = req.messages.at(-1);
      if (last?.role === 'tool') return `up: ${last.content}`;
      return canSpawn ? call('spawn_agent', { template: 'self', task: 'deeper' }) : 'bottom';
    });
    const h = load(
      hatch([
        {
          name: 'Recursive',
          sys_prompt: 'Base.',
          usr_prompt: 'start',
          spawn: {
            templates: [{ name: 'self', desc: 'A copy of me', sys_prompt: 'Focus: {{ task }}' }],
            max_depth: 2,
          },
        },
      ]),
    );
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(h);
    expect(res.output).toMatch(/depth\\*":2/);
    expect(res.output).toContain('bottom');
    const systems = model.calls.map((c) => c.system);
    expect(systems).toContain('Base.\n\nFocus: deeper');
    expect(model.calls.filter((c) => !c.tools?.length)).toHaveLength(1);
  });

  it('runs the spawn calls of a turn in order while they fit in max_fanout; a later one that does not is refused whole', async () => {
    const tasks = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => ({ template: 'researcher', task: `${tag}${i}` }));
    const model = coordinator({
      text: '',
      toolCalls: [
        { id: 'a', name: 'spawn_agents_parallel', args: { tasks: tasks(5, 'a') } },
        { id: 'b', name: 'spawn_agent', args: { template: 'researcher', task: 'b' } },
        { id: 'c', name: 'spawn_agents_parallel', args: { tasks: tasks(3, 'c') } },
        { id: 'd', name: 'spawn_agent', args: { template: 'researcher', task: 'd' } },
      ],
    });
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(
      load(def({ max_fanout: 7 })),
      { input: 'go' },
    );
    const ran = model.calls.filter((c) => c.system.startsWith('Research:')).map((c) => c.system.slice(10));
    expect(ran.sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'b', 'd']);
    const results = model.calls[model.calls.length - 1]!.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => (m as { isError?: boolean }).isError)).toEqual([false, false, true, false]);
    expect(results[2]).toMatchObject({
      content:
        'error: not started: at most 7 agents per turn (spawn.max_fanout) and this turn asked for 10; spawn fewer or in later turns',
    });
    // Seven agents and the Coordinator: eight steps of the run.
    expect(res.steps).toBe(8);
  });

  it('counts each agent as a step: past max_steps a spawn starts nothing and the model is told why', async () => {
    const model = coordinator(
      call('spawn_agents_parallel', {
        tasks: [1, 2, 3].map((i) => ({ template: 'researcher', task: `t${i}` })),
      }),
    );
    const h = load({ ...def(), max_steps: 3 });
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(h, { input: 'go' });
    expect(model.calls.filter((c) => c.system.startsWith('Research:'))).toHaveLength(2);
    const { results } = JSON.parse(res.output.replace('summary: ', '')) as { results: { error?: string }[] };
    expect(results.filter((r) => r.error)).toHaveLength(1);
    expect(results.find((r) => r.error)?.error).toMatch(
      /no agent started: the run used all its max_steps \(3\)/,
    );
  });

  it('validates spawn templates when the file loads', () => {
    expect(
      problems(
        hatch([
          { usr_prompt: 'x', spawn: { templates: [{ name: 'a', desc: 'd', sys_prompt: '{{ task ' }] } },
        ]),
      )[0],
    ).toMatch(/^nodes\/0\/spawn\/templates\/0\/sys_prompt: template syntax error/);
    expect(problems(hatch([{ usr_prompt: 'x', spawn: { templates: [] } }]))[0]).toMatch(
      /^nodes\/0\/spawn\/templates: /,
    );
  });
});
