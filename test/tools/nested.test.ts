import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { tempDir } from '../helpers.js';
import { callTool, loadIn, type Reply, Scripted, toolResults } from './helpers.js';

const rt = (model: Scripted, extra: ConstructorParameters<typeof Runtime>[0] = {}) =>
  new Runtime({ providers: { openai: model }, env: {}, ...extra });

const lastTool = (req: ChatRequest) => {
  const m = req.messages.at(-1);
  return m?.role === 'tool' ? m.content : undefined;
};

describe('hatch: and node: tools', () => {
  it('lets a drone call a hatch: tool whose drone calls a node: tool', async () => {
    const dir = tempDir();
    loadIn(
      dir,
      {
        name: 'helper',
        desc: 'Helps by shouting',
        nodes: [
          { name: 'Helper', sys_prompt: 'helper', usr_prompt: '{{ ctx.input }}', tools: ['node:Upper'] },
          { name: 'Upper', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input | upper }}' } },
        ],
      },
      'sub.json',
    );
    const main = loadIn(dir, {
      name: 'main',
      desc: 'd',
      nodes: [{ name: 'Main', sys_prompt: 'main', usr_prompt: '{{ ctx.input }}', tools: ['hatch:sub.json'] }],
    });
    const model = new Scripted((req): Reply => {
      const result = lastTool(req);
      if (req.system === 'helper')
        return result
          ? `helper got ${result}`
          : callTool('Upper', { input: req.messages[0]!.content as string });
      return result ? `main: ${result}` : callTool('helper', { input: 'abc' });
    });
    const res = await rt(model).run(main, { input: 'go' });
    expect(res.output).toBe('main: helper got ABC');
    expect(model.calls[0]!.tools).toEqual([
      expect.objectContaining({ name: 'helper', description: 'Helps by shouting' }),
    ]);
    expect(model.calls[1]!.tools!.map((t) => t.name)).toEqual(['Upper']);
    expect(res.usage.inputTokens).toBe(4);
  });

  it('stops a self-recursive hatchery with MAX_DEPTH, not a stack overflow', async () => {
    const dir = tempDir();
    const h = loadIn(
      dir,
      {
        name: 'rec',
        desc: 'calls itself',
        nodes: [{ type: 'tool', tool_name: 'hatch:rec.json', tool_args: { input: '{{ ctx.input }}.' } }],
      },
      'rec.json',
    );
    const err = (await rt(new Scripted([]))
      .run(h, { input: 'x' })
      .catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('MAX_DEPTH');
    expect(err.message).toMatch(/over max_depth \(5\).*needs a condition that stops it/);
  });

  it('stops a node: tool that calls its own node with MAX_DEPTH', async () => {
    const dir = tempDir();
    const h = loadIn(dir, {
      name: 'loop',
      desc: 'd',
      max_depth: 3,
      nodes: [{ name: 'Again', type: 'tool', tool_name: 'node:Again', tool_args: { input: 'x' } }],
    });
    const err = (await rt(new Scripted([]))
      .run(h)
      .catch((e) => e)) as HatcheryError;
    expect(err.code).toBe('MAX_DEPTH');
    expect(err.message).toContain('4 levels deep, over max_depth (3)');
  });

  it('shows a recursion too deep to the model that asked for it', async () => {
    const dir = tempDir();
    const h = loadIn(
      dir,
      {
        name: 'rec',
        desc: 'calls itself',
        max_depth: 2,
        nodes: [{ usr_prompt: '{{ ctx.input }}', tools: ['hatch:rec.json'] }],
      },
      'rec.json',
    );
    const model = new Scripted((req): Reply => lastTool(req) ?? callTool('rec', { input: 'deeper' }));
    const res = await rt(model).run(h, { input: 'x' });
    expect(res.output).toMatch(/^error: .*nested runs went 3 levels deep, over max_depth \(2\)/);
    expect(model.calls).toHaveLength(6);
  });
});

describe('tool results', () => {
  const def = (extra: Record<string, unknown> = {}) => ({
    name: 'cap',
    desc: 'd',
    nodes: [{ usr_prompt: 'x', tools: ['echo'], ...extra }],
  });

  it('cuts long results at the runtime limit with a note', async () => {
    const model = new Scripted([callTool('echo', { text: 'y'.repeat(500) }), 'ok']);
    await rt(model, { tools: { resultLimit: 120 } }).run(loadIn(tempDir(), def()));
    const content = toolResults(model)[0]!.content;
    expect(content.startsWith('y'.repeat(120))).toBe(true);
    expect(content).toContain('[result cut: 380 of 500 characters omitted');
    expect(content).toContain('tool_output_limit');
  });

  it("uses the node's tool_output_limit before the runtime's", async () => {
    const model = new Scripted([callTool('echo', { text: 'z'.repeat(500) }), 'ok']);
    await rt(model, { tools: { resultLimit: 120 } }).run(loadIn(tempDir(), def({ tool_output_limit: 300 })));
    expect(toolResults(model)[0]!.content).toMatch(/^z{300}\n\[result cut: 200 of 500/);
  });

  it('reports invalid arguments of a built-in to the model', async () => {
    const model = new Scripted([callTool('echo', { txt: 'typo' }), 'ok']);
    const res = await rt(model).run(loadIn(tempDir(), def()));
    expect(res.output).toBe('ok');
    expect(toolResults(model)[0]).toMatchObject({
      isError: true,
      content: expect.stringMatching(/invalid arguments for echo: text: /),
    });
  });
});
