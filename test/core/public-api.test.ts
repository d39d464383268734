import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';

describe('the public API', () => {
  it('loads and runs a hatchery defined in code, with a scripted model', async () => {
    const loaded = api.loadHatcheryObject(
      {
        name: 'embedded',
        desc: 'built in code',
        nodes: [{ name: 'Say', usr_prompt: 'Say {{ ctx.input }}' }],
      },
      '',
    );
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    const model = new api.ScriptedProvider((req) => `said: ${req.messages[0]?.content}`);
    const runtime = new api.Runtime({ providers: { openai: model }, env: {} });
    const result = await runtime.run(loaded.hatchery, { input: 'hi' });
    expect(result.output).toBe('said: Say hi');
  });

  it('reports invalid definitions as a ValidationError listing the problems', () => {
    const loaded = api.loadHatcheryObject({ name: 'x', nodes: [] }, 'inline.json');
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.error).toBeInstanceOf(api.ValidationError);
    expect(loaded.error.problems.map((p) => p.path)).toEqual(['desc', 'nodes']);
  });
});
