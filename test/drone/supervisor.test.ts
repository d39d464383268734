import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load, problems } from '../helpers.js';

const supervisor = hatch([
  { name: 'Boss', usr_prompt: 'Task: {{ ctx.input }}', next: ['Research', 'Write', 'END'], route: 'choose' },
  echo('Research', 'researched', { desc: 'Looks facts up' }),
  echo('Write', 'written', { desc: 'Writes the final text' }),
]);

/** A model that answers text, and answers choose_next calls with the given choices in turn. */
function chooser(...choices: unknown[]) {
  let i = 0;
  return new ScriptedProvider((req: ChatRequest) => {
    if (req.toolChoice && typeof req.toolChoice === 'object') {
      return { text: '', toolCalls: [{ id: `c${i}`, name: 'choose_next', args: { next: choices[i++] } }] };
    }
    return 'I mention Write and Research but choose by tool.';
  });
}

describe('supervisor routing (route: "choose")', () => {
  it('routes by the structured choice, not by names in the text, and keeps the text as output', async () => {
    const model = chooser('Research');
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(load(supervisor), {
      input: 'x',
    });
    expect(res.output).toBe('researched');
    expect(res.outputs.Boss).toBe('I mention Write and Research but choose by tool.');
    const choice = model.calls[1]!;
    expect(choice.toolChoice).toEqual({ name: 'choose_next' });
    const tool = choice.tools![0]!;
    expect(tool.name).toBe('choose_next');
    expect((tool.inputSchema as { properties: { next: { enum: string[] } } }).properties.next.enum).toEqual([
      'Research',
      'Write',
      'END',
    ]);
    expect(tool.description).toContain('Research: Looks facts up');
    expect(tool.description).toContain('Write: Writes the final text');
  });

  it('ends the run when the supervisor chooses END', async () => {
    const res = await new Runtime({ providers: { openai: chooser('END') }, env: {} }).run(load(supervisor), {
      input: 'x',
    });
    expect(res.output).toBe('I mention Write and Research but choose by tool.');
  });

  it('retries an invalid choice once, then falls back to the default (last entry)', async () => {
    const retried = chooser('Nonsense', 'Write');
    expect(
      (await new Runtime({ providers: { openai: retried }, env: {} }).run(load(supervisor), { input: 'x' }))
        .output,
    ).toBe('written');
    expect(retried.calls).toHaveLength(3);
    expect(JSON.stringify(retried.calls[2]!.messages)).toContain('Invalid choice');

    const stubborn = chooser('Nope', 'Still nope');
    const fallback = hatch([
      { name: 'Boss', usr_prompt: 'x', next: ['Research', 'Write'], route: 'choose' },
      echo('Research', 'researched'),
      echo('Write', 'written'),
    ]);
    expect((await new Runtime({ providers: { openai: stubborn }, env: {} }).run(load(fallback))).output).toBe(
      'written',
    );
    expect(stubborn.calls).toHaveLength(3);
  });

  it('needs a next list to choose from', () => {
    expect(problems(hatch([{ name: 'Boss', usr_prompt: 'x', route: 'choose' }]))).toEqual([
      'nodes/0/route: route "choose" needs a next list of at least two nodes to choose among',
    ]);
  });
});

describe('conversation reuse', () => {
  it('continues the history of another drone', async () => {
    const model = new ScriptedProvider(['Paris.', 'About 2.1 million.']);
    const h = load(
      hatch([
        { name: 'Guide', sys_prompt: 'You are a guide.', usr_prompt: 'Capital of France?', next: 'FollowUp' },
        { name: 'FollowUp', agent_reuse: 'Guide', usr_prompt: 'And its population?' },
      ]),
    );
    const res = await new Runtime({ providers: { openai: model }, env: {} }).run(h);
    expect(res.output).toBe('About 2.1 million.');
    const second = model.calls[1]!;
    expect(second.system).toBe('You are a guide.');
    expect(second.messages).toEqual([
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
      { role: 'user', content: 'And its population?' },
    ]);
  });

  it('is checked at load time and fails clearly when the drone has not run', async () => {
    expect(problems(hatch([{ usr_prompt: 'x', conversation: 'Ghost' }]))).toEqual([
      'nodes/0/conversation: no node named "Ghost"; drones: node_1',
    ]);
    const h = load(
      hatch([
        { name: 'Later', conversation: 'First', usr_prompt: 'x', next: 'First' },
        { name: 'First', usr_prompt: 'y' },
      ]),
    );
    await expect(
      new Runtime({ providers: { openai: new ScriptedProvider(['a']) }, env: {} }).run(h),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', context: { node: 'Later', field: 'conversation' } });
  });
});
