/**
 * Records the cassettes of the examples in hatchery/ against the fake OpenAI and Anthropic servers,
 * with scripted replies where an example needs a particular answer (a route, an approval, a spawn).
 * Prints each case's output, nodes and tokens, for writing the expectations of hatchery/tests/.
 *
 * Usage: npx tsx test/cassette/record-examples.ts [cassette...]   (writes hatchery/tests/cassettes/*.jsonl;
 * with names, records only those cassettes and leaves the others as they are)
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Cassette } from '../../src/runtime/cassette/cassette.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { FakeAnthropic } from '../fakes/fake-anthropic.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeMessageReply, FakeServer, WireBody } from '../fakes/http.js';

const root = path.resolve(import.meta.dirname, '../..');
const cassettes = path.join(root, 'hatchery/tests/cassettes');

const openai = new FakeOpenAI();
const anthropic = new FakeAnthropic();
await Promise.all([openai.start(), anthropic.start()]);

/** The system prompt of an OpenAI request body. */
const system = (body: WireBody): string =>
  body.messages?.find((m: WireBody) => m.role === 'system')?.content ?? '';

/** Answers requests with `pick(body)`, or the fake's own default reply when it gives nothing. */
function script(fake: FakeServer, pick: (body: WireBody) => FakeMessageReply | string | undefined): void {
  const fallback = (fake as unknown as { wire: { defaultReply(b: WireBody): FakeMessageReply } }).wire;
  fake.reset();
  for (let i = 0; i < 100; i++) fake.enqueue((body) => pick(body) ?? fallback.defaultReply(body));
}

interface Case {
  /** The example's file in hatchery/: a bare name is `<name>.json`. */
  example: string;
  cassette: string;
  input?: string;
  vars?: Record<string, string>;
  vendor: 'openai' | 'anthropic';
  pick?: (body: WireBody) => FakeMessageReply | string | undefined;
}

const cases: Case[] = [
  { example: 'hello', cassette: 'hello', input: 'What is a hatchery?', vendor: 'anthropic' },
  {
    example: 'triage-router',
    cassette: 'triage-bug',
    input: 'The app crashes when I click Save.',
    vendor: 'openai',
    pick: (b) => (system(b).startsWith('Classify') ? 'Bug' : undefined),
  },
  {
    example: 'triage-router',
    cassette: 'triage-question',
    input: 'How do I export my data?',
    vendor: 'openai',
    pick: (b) => (system(b).startsWith('Classify') ? 'Question' : undefined),
  },
  {
    example: 'story-chain',
    cassette: 'story-chain',
    vars: { topic: 'a lighthouse keeper' },
    vendor: 'openai',
    pick: (b) =>
      system(b).startsWith('You write vivid')
        ? 'Every night Mara climbed the hundred steps and lit the lamp for ships that never came.'
        : 'The Last Light\n\nEvery night Mara climbed the hundred steps and lit the lamp for ships that never came.',
  },
  {
    example: 'parallel-review',
    cassette: 'parallel-review',
    input: 'MCP is a protocol. It are useful.',
    vendor: 'openai',
  },
  {
    example: 'outline-expand',
    cassette: 'outline-expand',
    input: 'tide pools',
    vendor: 'openai',
    pick: (b) => {
      if (b.response_format)
        return JSON.stringify({ title: 'Tide Pools', sections: ['Who lives there', 'When to visit'] });
      const user = b.messages?.at(-1)?.content ?? '';
      if (user.startsWith('Now write a two-sentence introduction'))
        return 'Tide pools are small worlds left behind by the sea. Here is how to meet them.';
      const m = /Write the section "([^"]+)"/.exec(user);
      return m ? `A short section about ${m[1]!.toLowerCase()}.` : undefined;
    },
  },
  {
    example: 'research-team',
    cassette: 'research-team',
    input: 'Why is the sky blue?',
    vendor: 'openai',
    pick: (b) => {
      const s = system(b);
      if (s.startsWith('You are a demanding critic')) return 'APPROVED';
      if (s.startsWith('You coordinate researchers')) {
        if (!b.messages.some((m: WireBody) => m.role === 'tool')) {
          const tasks = [
            { template: 'researcher', task: 'What is Rayleigh scattering?' },
            { template: 'researcher', task: 'Why not violet?' },
          ];
          return { toolCalls: [{ name: 'spawn_agents_parallel', args: { tasks } }] };
        }
        return 'Findings: short wavelengths scatter most; our eyes are less sensitive to violet.';
      }
      if (s.startsWith('You are a focused researcher')) return `Answer: ${s.split(': ').at(-1)}`;
      if (s.startsWith('You write clear'))
        return 'The sky is blue because air scatters short (blue) wavelengths of sunlight more than long ones (Rayleigh scattering).';
      return undefined;
    },
  },
  { example: 'read-notes', cassette: 'read-notes', input: 'welcome.md', vendor: 'openai' },
  {
    example: 'design-qa.yaml',
    cassette: 'design-qa',
    input: 'What is MCP?',
    vendor: 'openai',
    pick: (b) =>
      (b.messages?.at(-1)?.content ?? '').startsWith('Tighten your answer')
        ? 'MCP (the Model Context Protocol) is an open protocol that lets a model call tools and read data that servers offer. One server works with many clients.'
        : 'MCP, the Model Context Protocol, is an open protocol. It lets a model call tools and read data that servers offer, so one server works with many clients.',
  },
];

const only = process.argv.slice(2);
for (const name of only)
  if (!cases.some((c) => c.cassette === name)) throw new Error(`no cassette named "${name}"`);

for (const c of cases.filter((x) => only.length === 0 || only.includes(x.cassette))) {
  const fake = c.vendor === 'openai' ? openai : anthropic;
  script(fake, c.pick ?? (() => undefined));
  const file = path.join(cassettes, `${c.cassette}.jsonl`);
  rmSync(file, { force: true });
  const cassette = await Cassette.open({ file, mode: 'record' });
  const env =
    c.vendor === 'openai'
      ? { OPENAI_API_KEY: 'sk-recording-key-never-stored', OPENAI_BASE_URL: openai.baseURL }
      : { ANTHROPIC_API_KEY: 'sk-ant-recording-key-never-stored', ANTHROPIC_BASE_URL: anthropic.baseURL };
  const runtime = new Runtime({ env, cassette, cwd: root });
  const nodes: string[] = [];
  try {
    const example = path.extname(c.example) ? c.example : `${c.example}.json`;
    const h = await runtime.load(path.join(root, 'hatchery', example));
    const r = await runtime.run(h, {
      input: c.input,
      vars: c.vars,
      onEvent: (e) => {
        if (e.type === 'node_start' && e.depth === 0) nodes.push(e.node);
      },
    });
    console.log(
      JSON.stringify({
        cassette: c.cassette,
        nodes,
        tokens: r.usage.inputTokens + r.usage.outputTokens,
        output: r.output,
      }),
    );
  } finally {
    await runtime.close();
  }
}
await Promise.all([openai.close(), anthropic.close()]);
