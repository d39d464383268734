import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadHatchery } from '../../src/loader/load.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { load } from '../helpers.js';
import { runtimeWith, userText } from './helpers.js';

const doc = readFileSync(new URL('../../docs/orchestration.md', import.meta.url), 'utf8');
/** The complete hatcheries among the doc's JSON examples. */
const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((t) => t.startsWith('{\n  "name"'))
  .map((t) => JSON.parse(t) as { name: string });

describe('docs/orchestration.md and the example file', () => {
  it('has examples that load', () => {
    expect(examples.map((e) => e.name)).toEqual(['review', 'summarize_each', 'refine']);
    for (const e of examples) load(e);
  });

  it('refine: loops until the critic approves', async () => {
    const model = new ScriptedProvider(['Fast.', 'too short', 'Fast and kind.', 'APPROVED']);
    const res = await runtimeWith(model).run(load(examples[2]), { input: 'a bakery' });
    expect(res.output).toBe('Fast and kind.');
    expect(userText(model.calls[2]!)).toBe(
      'Write a tagline for a bakery. Improve on this feedback: too short',
    );
  });

  it('hatchery/parallel-review.json fans out to three reviewers and summarizes them', async () => {
    const h = await loadHatchery(new URL('../../hatchery/parallel-review.json', import.meta.url).pathname);
    const model = new ScriptedProvider((req) =>
      req.system.startsWith('You merge') ? `merged:\n${userText(req)}` : `${req.system.split(' ')[4]} review`,
    );
    const res = await runtimeWith(model).run(h, { input: 'Teh text.' });
    expect(model.callCount).toBe(4);
    expect(res.output).toContain('## Correctness\n');
    expect(res.output).toContain('## Clarity\n');
    expect(res.output).toContain('## Tone\n');
    expect(res.output.startsWith('merged:\nThe text:\n\nTeh text.')).toBe(true);
  });
});
