/**
 * The journal keeps what each model call sent, redacted, without writing a tool loop's conversation
 * again on every turn; the studio puts each call's whole prompt back together from it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { treeOf } from '../../src/studio/runs.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

const SECRET = 'sk-journal-prompt-secret-0123456789';
let runtime: Runtime | undefined;
afterEach(() => runtime?.close());

describe('prompts in the journal', () => {
  it('writes a tool loop once, call by call, redacted, and the whole prompt of each call can be read back', async () => {
    const model = new ScriptedProvider((req: ChatRequest) => {
      const tools = req.messages.filter((m) => m.role === 'tool').length;
      if (tools < 3)
        return { text: '', toolCalls: [{ id: `t${tools}`, name: 'Echo', args: { input: `n${tools}` } }] };
      return 'finished';
    });
    const state = tempDir();
    const store = new FileRunStore(state, { env: { OPENAI_API_KEY: SECRET } });
    runtime = new Runtime({ providers: { openai: model }, env: { OPENAI_API_KEY: SECRET }, store });
    const h = load(
      hatch([
        {
          name: 'Loop',
          sys_prompt: 'be brief',
          usr_prompt: `key ${SECRET} and {{ ctx.input }}`,
          tools: ['node:Echo'],
        },
        echo('Echo', 'echoed {{ ctx.input }}'),
      ]),
    );
    const res = await runtime.run(h, { input: 'owls' });
    expect(res.output).toBe('finished');
    await runtime.close();
    const stored = (await store.read(res.runId))!;
    const calls = stored.records.filter((r) => r.type === 'model_call');
    expect(calls).toHaveLength(4);
    // The first call carries the system prompt and the user message; each later one only what it added.
    expect(calls[0]).toMatchObject({ system: 'be brief', messages: [{ role: 'user' }] });
    expect(calls[0]!.from).toBeUndefined();
    for (let i = 1; i < 4; i++) {
      expect(calls[i]).toMatchObject({ from: 1 + (i - 1) * 2 });
      expect(calls[i]!.system).toBeUndefined();
      expect((calls[i]!.messages as unknown[]).length).toBe(2);
    }
    const text = JSON.stringify(stored.records);
    expect(text).not.toContain(SECRET);
    expect(text.split('key [redacted').length - 1).toBe(1);

    const { prompts, tree } = treeOf(stored, [SECRET]);
    const models = tree.root.children[0]!.children.filter((c) => c.kind === 'model');
    expect(models).toHaveLength(4);
    const last = prompts[models[3]!.id] as { system: string; messages: { role: string; content: unknown }[] };
    expect(last.system).toBe('be brief');
    expect(last.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(JSON.stringify(last)).not.toContain(SECRET);
    expect(last.messages.at(-1)!.content).toContain('echoed n2');
  });
});
