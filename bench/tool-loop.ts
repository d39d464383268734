// A long tool loop: one drone whose model asks for the `echo` tool on every turn for T turns (200 by
// default), then answers. The model is the real OpenAIProvider and openai SDK with an in-process
// `fetch` that answers at once (no network), so what is measured is the runtime's and the provider's
// work per turn: converting the conversation to the wire, the SDK's request, the tool call, the loop.
// The body the SDK serializes grows with the conversation on every turn, as it does against a real
// server; what must not grow on top of that is our own per-turn work. Before/after: pass
// `--base /work/wt/base` (a checkout of an earlier commit) to run its source interleaved with this one.
// Usage: node --import tsx bench/tool-loop.ts [--turns T] [--runs R] [--base DIR]
import path from 'node:path';
import OpenAI from 'openai';
import { median } from './lib/stats.js';

const smoke = process.env.BENCH_SMOKE === '1';
function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const TURNS = Number(option('--turns') ?? (smoke ? 20 : 200));
const RUNS = Number(option('--runs') ?? (smoke ? 2 : 9));
const root = new URL('..', import.meta.url).pathname;
const base = option('--base');

/** An in-process OpenAI server: a tool call on every turn until the last, then a text answer. */
function fakeFetch(turns: number): typeof fetch {
  let seq = 0;
  return async () => {
    seq++;
    const last = seq % (turns + 1) === 0;
    const message = last
      ? { role: 'assistant', content: 'done', refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: `call_${seq}`,
              type: 'function',
              function: { name: 'echo', arguments: `{"text":"turn ${seq}"}` },
            },
          ],
        };
    const body = {
      id: `chatcmpl-${seq}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-bench',
      choices: [{ index: 0, message, logprobs: null, finish_reason: last ? 'stop' : 'tool_calls' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    };
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
}

/** Loads the runtime of the source tree at `dir` and returns a function running one whole loop. */
async function setup(dir: string) {
  const src = (p: string) => import(path.join(dir, 'src', p));
  const { loadHatcheryObject } = await src('loader/load.ts');
  const { OpenAIProvider } = await src('providers/openai.ts');
  const { Runtime } = await src('runtime/runtime.ts');
  const res = loadHatcheryObject(
    {
      name: 'loop',
      desc: 'bench',
      nodes: [{ name: 'L', usr_prompt: '{{ ctx.input }}', tools: ['echo'], max_turns: TURNS + 1 }],
    },
    '/tmp/bench-tool-loop.json',
  );
  if (!res.ok) throw res.error;
  const client = new OpenAI({
    apiKey: 'sk-bench',
    baseURL: 'http://fake.invalid/v1',
    fetch: fakeFetch(TURNS),
  });
  const runtime = new Runtime({ providers: { openai: new OpenAIProvider(client) }, env: {} });
  return async (): Promise<number> => {
    const t0 = performance.now();
    const r = await runtime.run(res.hatchery, { input: 'go' });
    const ms = performance.now() - t0;
    if (r.output !== 'done') throw new Error(`unexpected output ${JSON.stringify(r.output)}`);
    return ms;
  };
}

const sides: [string, () => Promise<number>][] = [['this tree', await setup(root)]];
if (base) sides.push([`base (${base})`, await setup(path.resolve(base))]);
const times = sides.map(() => [] as number[]);
for (const [, run] of sides) for (let i = 0; i < 2; i++) await run();
for (let i = 0; i < RUNS; i++) {
  // Alternate which side goes first, so drift hits both alike.
  const order = i % 2 ? [...sides.keys()].reverse() : [...sides.keys()];
  for (const k of order) times[k]!.push(await sides[k]![1]());
}
console.log(
  `tool loop of ${TURNS} turns (echo tool, openai SDK with an in-process fetch), median of ${RUNS} runs`,
);
for (const [k, [name]] of sides.entries()) {
  const m = median(times[k]!);
  console.log(
    `  ${name.padEnd(40)} ${m.toFixed(1)} ms per loop   ${((m * 1000) / TURNS).toFixed(0)} µs per turn`,
  );
}
if (!base) console.log('  (pass --base DIR, a checkout of an earlier commit, for a before/after ratio)');
else {
  const ratio = median(times[0]!) / median(times[1]!);
  console.log(
    `  this tree / base ${ratio.toFixed(2)}x   (target: no slower, ${ratio <= 1 ? 'met' : 'NOT met'})`,
  );
}
