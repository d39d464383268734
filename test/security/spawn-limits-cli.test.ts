/**
 * Attack: a model that spawns 25 copies of itself every turn, through the built CLI and the real
 * OpenAI SDK against the fake server. Each agent takes one of the run's max_steps and one turn starts
 * at most spawn.max_fanout agents, so the model calls the fake sees stay under a bound computed from
 * the defaults (before: 16,927 calls from one request).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { envOf } from '../budget/helpers.js';
import type { WireBody } from '../fakes/http.js';
import { fakeVendors } from '../fakes/vendors.js';
import { type CliResult, cliFolder } from '../helpers.js';

const fakes = fakeVendors();
afterEach(() => fakes.openai.reset());

/** The defaults this test holds the run to: max_steps, max_turns, spawn.max_fanout. */
const MAX_STEPS = 100;
const MAX_TURNS = 10;
const FANOUT = 8;

const boss = (spawn: Record<string, unknown> = {}) => ({
  name: 'swarm',
  desc: 'a boss that spawns copies of itself',
  start: 'Boss',
  nodes: [
    {
      name: 'Boss',
      model: 'openai:gpt-test',
      usr_prompt: 'do {{ ctx.input }}',
      spawn: { templates: [{ name: 'self', desc: 'a copy of you' }], ...spawn },
    },
  ],
});

/** Every model turn that has the spawn tools asks for 25 copies of itself; one without them answers. */
function spawnForever(calls: (n: number) => { name: string; args: unknown; id: string }[]): void {
  let n = 0;
  const route = (body: WireBody) => {
    if (!body.tools?.length) return { text: 'leaf' };
    n++;
    return { toolCalls: calls(n) };
  };
  for (let i = 0; i < 3 * MAX_STEPS * MAX_TURNS; i++) fakes.openai.enqueue(route);
}

const copies = (n: number) =>
  Array.from({ length: 25 }, (_, i) => ({
    name: 'spawn_agent',
    args: { template: 'self', task: `copy ${n}.${i}` },
    id: `call_${n}_${i}`,
  }));

/** The tool results each request carries back (the previous turn's), per request. */
function turnsOfResults(): string[][] {
  return fakes.openai.requests.map((r) =>
    (r.body.messages as { role: string; content: unknown }[])
      .slice((r.body.messages as { role: string }[]).findLastIndex((m) => m.role === 'assistant') + 1)
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content)),
  );
}

/** Runs `def` from a fresh folder with `args`, against the fake server. */
function run(def: unknown, args = ['--input', 'everything', '--no-journal']): Promise<CliResult> {
  const folder = cliFolder({ env: () => envOf(fakes) });
  return folder.run(folder.write('swarm.json', def), args);
}

describe('a model spawning 25 copies of itself every turn', () => {
  it('makes at most max_steps agents and max_fanout per turn: the model calls stay bounded', async () => {
    spawnForever(copies);
    const r = await run(boss());
    expect(r.stderr).not.toMatch(/missing required key/);
    // The adversary never ran out of replies: every bound below is the run's, not the script's.
    expect(fakes.openai.pending).toBeGreaterThan(0);
    const requests = fakes.openai.requests;
    // One conversation per step (the Boss node and each agent), each at most max_turns model calls.
    expect(requests.length).toBeLessThanOrEqual(MAX_STEPS * MAX_TURNS);
    // Agents started: the first request of each conversation whose user message is a copy's task.
    const starts = requests.filter((q) => {
      const m = q.body.messages as { role: string; content: unknown }[];
      return m.length === 2 && String(m[1]?.content).startsWith('copy ');
    });
    expect(starts.length).toBeLessThanOrEqual(MAX_STEPS - 1);
    expect(starts.length).toBeGreaterThanOrEqual(FANOUT);
    const turns = turnsOfResults();
    for (const results of turns) {
      // Of each turn's 25 spawn calls, at most max_fanout ran; the others were refused up front.
      const ran = results.filter((t) => !t.includes('agents per turn'));
      expect(ran.length).toBeLessThanOrEqual(FANOUT);
    }
    const seen = turns.flat();
    expect(seen).toContain(
      'error: not started: at most 8 agents per turn (spawn.max_fanout) and this turn asked for 25; spawn fewer or in later turns',
    );
    expect(seen.some((t) => t.includes('no agent started: the run used all its max_steps (100)'))).toBe(true);
    // The Boss never stops asking for tools: the run ends with its max_turns error, named.
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Boss.*max_turns \(10\)/);
  }, 60_000);

  it('refuses a spawn_agents_parallel wider than max_fanout as a whole, and the model sees why', async () => {
    let asked = 0;
    const route = (body: WireBody) => {
      const last = body.messages.at(-1);
      if (!body.tools?.length || String(body.messages[1]?.content).startsWith('part '))
        return { text: 'part done' };
      if (last?.role === 'tool') return { text: `boss saw: ${last.content}` };
      asked++;
      const tasks = Array.from({ length: 25 }, (_, i) => ({ template: 'self', task: `part ${i}` }));
      return { toolCalls: [{ name: 'spawn_agents_parallel', args: { tasks }, id: 'call_wide' }] };
    };
    for (let i = 0; i < 50; i++) fakes.openai.enqueue(route);
    const r = await run(boss({ max_fanout: 3 }), ['--input', 'x', '--no-journal', '-q']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(asked).toBe(1);
    // No agent ran: the one call asked for 25 > 3, so only the Boss's two turns reached the model.
    expect(fakes.openai.requests.length).toBe(2);
    expect(r.stdout.trim()).toBe(
      'boss saw: error: not started: at most 3 agents per turn (spawn.max_fanout) and this turn asked for 25; spawn fewer or in later turns',
    );
  }, 30_000);
});
