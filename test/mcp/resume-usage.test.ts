/**
 * What a run resumed from its journal reports it cost, through the built CLI and a real MCP client
 * against the fake OpenAI server: hatchery_result gives the whole run's tokens (every attempt) and
 * each attempt's, and agrees with hatchery_status, which counts them all too.
 */
import { describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { tempDir } from '../helpers.js';
import { fakeEnv, hatcheryDir, jsonOf, spawnCli, writeHatchery } from './helpers.js';

const { openai, anthropic } = fakeVendors();

type Usage = { input_tokens: number; output_tokens: number };

describe('a run resumed with hatchery_respond', () => {
  it('reports the total usage of its attempts, and each attempt, as hatchery_status does', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'review.json', {
      name: 'review',
      desc: 'drafts, asks, polishes',
      nodes: [
        { name: 'Draft', usr_prompt: 'draft {{ ctx.input }}', next: 'Q' },
        { name: 'Q', type: 'ask', question: 'Polish it?', choices: ['yes', 'no'], next: 'Polish' },
        { name: 'Polish', usr_prompt: 'polish {{ out.Draft }} ({{ out.Q }})' },
      ],
    });
    openai.reset();
    openai.enqueue(
      { text: 'a draft', usage: { input: 10, output: 5 } },
      { text: 'polished', usage: { input: 20, output: 7 } },
    );
    const env = { ...fakeEnv(openai.baseURL, anthropic.url), HATCHERY_STATE: tempDir('resume-usage-') };
    const { client, close } = await spawnCli(dir, { env });
    try {
      const started = jsonOf(
        await client.callTool({ name: 'hatchery_start', arguments: { name: 'review', input: 'owls' } }),
      );
      const id = started.run_id as string;
      const waiting = jsonOf(
        await client.callTool({ name: 'hatchery_result', arguments: { run_id: id, wait_seconds: 20 } }),
      );
      expect(JSON.stringify(waiting)).toContain('Polish it?');
      await client.callTool({ name: 'hatchery_respond', arguments: { run_id: id, answer: 'yes' } });
      const done = jsonOf(
        await client.callTool({ name: 'hatchery_result', arguments: { run_id: id, wait_seconds: 20 } }),
      );
      expect(done.output).toBe('polished');
      const usage = done.usage as Usage;
      expect([usage.input_tokens, usage.output_tokens]).toEqual([30, 12]);
      const each = done.usage_by_attempt as Usage[];
      expect(each.map((u) => [u.input_tokens, u.output_tokens])).toEqual([
        [10, 5],
        [20, 7],
      ]);
      const status = jsonOf(await client.callTool({ name: 'hatchery_status', arguments: { run_id: id } }));
      expect([status.input_tokens, status.output_tokens]).toEqual([30, 12]);
      // Two model calls in all: the draft was taken from the journal, not asked again.
      expect(openai.requests).toHaveLength(2);
    } finally {
      await close();
    }
  });
});
