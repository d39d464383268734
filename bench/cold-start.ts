// Cold start: the time from spawning a server process to the answer of its first `tools/list` over
// stdio (spawn + initialize + tools/list), for `hatchery-mcp serve --dir D` with N hatchery files
// against a bare MCP SDK v2 server (McpServer + serveStdio, as bench/fixtures/echo-server.ts) that
// registers N echo tools, for N = 1, 100 and 1,000. Targets (issue 15): at most 1.2x the bare server
// with 100 files, at most 2x with 1,000.
//
// Method: rounds interleave the two servers at every size (drift hits both alike); the figure is the
// median per server and size. The files are realistic: drone chains with templates and inputs, a
// parallel with a join, a router, a map with structured output (the shapes of hatchery/*.json).
// The bare server is plain JavaScript written to a temporary file (no tsx in the measured process:
// the CLI runs from dist/ too). The client is the real SDK Client with StdioClientTransport: its own
// import happens once, in this process, before any timing, so it weighs on neither side.
// Beside the wall time, each start's CPU time on the server's main thread up to the answer is read
// from /proc/<pid>/schedstat (Linux; "-" elsewhere): the work itself, which a machine shared with
// other jobs does not blur as it blurs the wall time (the targets stay on the wall time).
// Once per build, an untimed start with a module-load hook counts the modules (ours, and from
// node_modules) loaded before the first tools/list answer: what start-up imports.
// A second line per size gives the time to the answer of a first tools/call sent right after the
// list: `hatchery_list` for hatchery-mcp, which waits for every file's deferred compile and analysis
// (serve lists files once validated, and compiles them after its first answer), and echo_0 for the
// bare server. The deferred work shows there; the targets stay on the first tools/list.
// `--cli PATH` measures another build (e.g. /work/wt/base/dist/cli.js for the "before" figures);
// `--base PATH` adds a second build to the same interleaved rounds, for before/after in one run.
// Usage: npm run build && node --import tsx bench/cold-start.ts [--rounds R] [--cli dist/cli.js] [--base other/dist/cli.js]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { median } from './lib/stats.js';

const root = new URL('..', import.meta.url).pathname;
const smoke = process.env.BENCH_SMOKE === '1';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const ROUNDS = Number(option('--rounds') ?? (smoke ? 1 : 7));
const CLI = path.resolve(option('--cli') ?? path.join(root, 'dist/cli.js'));
const baseOption = option('--base');
const BASE = baseOption === undefined ? undefined : path.resolve(baseOption);
const SIZES = smoke ? [1, 100] : [1, 100, 1_000];
const TARGETS: Record<number, number> = { 100: 1.2, 1000: 2 };

/** Hatchery file number `i`: one of four shapes taken from hatchery/*.json, named uniquely. */
function hatcheryFile(i: number): object {
  const name = `h_${i}`;
  switch (i % 4) {
    case 0:
      return {
        name,
        desc: 'Write a very short story about a topic, then give it a title.',
        inputs: { topic: 'What should the story be about?', tone: 'Which tone?' },
        nodes: [
          {
            name: 'Writer',
            sys_prompt: 'You write vivid 100-word stories in a {{ ctx.tone | default("warm") }} tone.',
            usr_prompt: 'Write a story about {{ ctx.topic }}.',
            save_output: 'story',
            next: 'Titler',
          },
          {
            name: 'Titler',
            usr_prompt: 'Give this story a title, then repeat it under the title.\n\n{{ ctx.story }}',
            next: 'Polish',
          },
          {
            name: 'Polish',
            usr_prompt:
              '{% if ctx.tone %}Keep the {{ ctx.tone }} tone. {% endif %}Polish:\n\n{{ out.Titler }}',
          },
        ],
      };
    case 1:
      return {
        name,
        desc: 'Review a text from three angles at once, then merge the reviews.',
        nodes: [
          {
            name: 'Reviews',
            type: 'parallel',
            branches: ['Correctness', 'Clarity', 'Tone'],
            on_error: 'continue',
            next: 'Summary',
          },
          { name: 'Correctness', sys_prompt: 'You check facts.', usr_prompt: '{{ ctx.input }}' },
          { name: 'Clarity', sys_prompt: 'You care about clarity.', usr_prompt: '{{ ctx.input }}' },
          { name: 'Tone', sys_prompt: 'You review tone.', usr_prompt: '{{ ctx.input }}' },
          {
            name: 'Summary',
            sys_prompt: 'You merge reviews into one numbered list.',
            usr_prompt: 'The text:\n\n{{ ctx.input }}\n\nThe reviews:\n\n{{ out.Reviews }}',
          },
        ],
      };
    case 2:
      return {
        name,
        desc: 'Classify a support message and draft the matching reply.',
        nodes: [
          {
            name: 'Classify',
            sys_prompt: 'Answer with exactly one word: Bug, Question or Other.',
            usr_prompt: '{{ ctx.input }}',
            next: ['Bug', 'Question', 'Other'],
          },
          { name: 'Bug', usr_prompt: 'Ask for the steps to reproduce:\n\n{{ ctx.input }}' },
          { name: 'Question', usr_prompt: 'Answer briefly:\n\n{{ ctx.input }}' },
          { name: 'Other', usr_prompt: 'Thank the sender:\n\n{{ ctx.input }}' },
        ],
      };
    default:
      return {
        name,
        desc: 'Plan an article as structured output, write every section concurrently, assemble.',
        nodes: [
          {
            name: 'Plan',
            usr_prompt: 'Plan a short article about {{ ctx.input }}: a title and section headings.',
            output_schema: {
              type: 'object',
              properties: {
                title: { type: 'string' },
                sections: { type: 'array', items: { type: 'string' } },
              },
              required: ['title', 'sections'],
            },
            next: 'Sections',
          },
          {
            name: 'Sections',
            type: 'map',
            items: '{{ out.Plan.sections | dump }}',
            node: 'WriteSection',
            concurrency: 4,
            next: 'Assemble',
          },
          {
            name: 'WriteSection',
            usr_prompt:
              'Write the section "{{ ctx.item }}" (number {{ ctx.index + 1 }}) of "{{ out.Plan.title }}".',
          },
          {
            name: 'Assemble',
            type: 'tool',
            tool_name: 'echo',
            tool_args: {
              text: '# {{ out.Plan.title }}\n{% for s in out.Sections %}\n## {{ out.Plan.sections[loop.index0] }}\n\n{{ s }}\n{% endfor %}',
            },
          },
        ],
      };
  }
}

/** The bare server as plain JavaScript: the SDK and zod imported by absolute URL from this repo. */
function bareServerSource(): string {
  const server = import.meta.resolve('@modelcontextprotocol/server');
  const stdio = import.meta.resolve('@modelcontextprotocol/server/stdio');
  const zod = import.meta.resolve('zod');
  return `import { McpServer } from ${JSON.stringify(server)};
import { serveStdio } from ${JSON.stringify(stdio)};
import { z } from ${JSON.stringify(zod)};
const n = Number(process.argv[2]);
serveStdio(() => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
  for (let i = 0; i < n; i++)
    server.registerTool('echo_' + i, { description: 'Returns its input', inputSchema: z.object({ input: z.string() }) },
      async ({ input }) => ({ content: [{ type: 'text', text: input }] }));
  return server;
});
`;
}

/** Module hooks that write each module load (epoch time, URL) to stderr, from the hooks thread. */
const COUNT_HOOKS = `export async function load(url, context, next) {
  const r = await next(url, context);
  if (url.startsWith('file:')) process.stderr.write(\`MODULE \${performance.timeOrigin + performance.now()} \${url}\\n\`);
  return r;
}
`;

const work = mkdtempSync(path.join(tmpdir(), 'hatchery-cold-'));
const bare = path.join(work, 'bare-server.mjs');
writeFileSync(bare, bareServerSource());
const countHook = path.join(work, 'count-hook.mjs');
writeFileSync(path.join(work, 'count-hooks.mjs'), COUNT_HOOKS);
writeFileSync(
  countHook,
  `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(work, 'count-hooks.mjs')).href)});\n`,
);
const dirs = new Map<number, string>();
for (const n of SIZES) {
  const dir = path.join(work, `files-${n}`);
  mkdirSync(dir);
  for (let i = 0; i < n; i++)
    writeFileSync(path.join(dir, `h_${i}.json`), JSON.stringify(hatcheryFile(i), null, 2));
  dirs.set(n, dir);
}
// Journals go to a folder of their own, outside the served folders.
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
env.HATCHERY_STATE = path.join(work, 'state');

/** CPU milliseconds the main thread of process `pid` ran so far, when the system tells (Linux). */
function mainThreadCpu(pid: number | null): number | undefined {
  if (pid === null) return undefined;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * Milliseconds from spawn to the first tools/list answer, and the server's main-thread CPU time by
 * then; checks that all `expect` tools are listed.
 */
async function coldStart(
  args: string[],
  expect: number,
): Promise<{ ms: number; cpu?: number; callMs: number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const t0 = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: work,
    env,
    stderr: 'ignore',
  });
  await client.connect(transport);
  const list = await client.listTools();
  const ms = performance.now() - t0;
  const cpu = mainThreadCpu(transport.pid);
  const bare = list.tools.some((t) => t.name === 'echo_0');
  const call = await client.callTool(
    bare ? { name: 'echo_0', arguments: { input: 'x' } } : { name: 'hatchery_list', arguments: {} },
  );
  const callMs = performance.now() - t0;
  if (call.isError) throw new Error(`first call failed: ${JSON.stringify(call).slice(0, 300)}`);
  await client.close();
  // Generic tools (hatchery_list, ...) aside: every file must be served, none rejected as invalid.
  const served = list.tools.filter((t) => /^(h|echo)_\d+$/.test(t.name)).length;
  if (served !== expect) throw new Error(`expected ${expect} tools from ${args.join(' ')}, got ${served}`);
  return { ms, cpu, callMs };
}

/** Modules loaded before the first tools/list answer (untimed: the hook slows loading). */
async function modulesAtList(args: string[]): Promise<{ ours: number; deps: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', countHook, ...args],
    cwd: work,
    env,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (b) => {
    err += String(b);
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  const answered = performance.timeOrigin + performance.now();
  // Lines written before the answer may still be in the pipe.
  await new Promise((r) => setTimeout(r, 200));
  await client.close();
  const urls = err
    .split('\n')
    .filter((l) => l.startsWith('MODULE ') && Number(l.split(' ')[1]) <= answered)
    .map((l) => l.split(' ')[2] ?? '');
  const deps = urls.filter((u) => u.includes('/node_modules/')).length;
  return { ours: urls.length - deps, deps };
}

const times = new Map<string, number[]>();
const calls = new Map<string, number[]>();
const cpus = new Map<string, number[]>();
const modules = new Map<string, { ours: number; deps: number }>();
const push = (key: string, r: { ms: number; cpu?: number; callMs: number }) => {
  times.set(key, [...(times.get(key) ?? []), r.ms]);
  calls.set(key, [...(calls.get(key) ?? []), r.callMs]);
  if (r.cpu !== undefined) cpus.set(key, [...(cpus.get(key) ?? []), r.cpu]);
};
try {
  // Warm-up: the OS file cache and node's own code cache for both sides.
  await coldStart([bare, '1'], 1);
  await coldStart([CLI, 'serve', '--dir', dirs.get(1)!], 1);
  if (BASE) await coldStart([BASE, 'serve', '--dir', dirs.get(1)!], 1);
  for (let r = 0; r < ROUNDS; r++) {
    for (const n of SIZES) {
      const sides: [string, () => Promise<{ ms: number; cpu?: number; callMs: number }>][] = [
        ['bare', () => coldStart([bare, String(n)], n)],
        ['hatchery', () => coldStart([CLI, 'serve', '--dir', dirs.get(n)!], n)],
      ];
      if (BASE) sides.push(['base', () => coldStart([BASE, 'serve', '--dir', dirs.get(n)!], n)]);
      // Alternate which side goes first, so none always follows another's page-cache misses.
      if (r % 2 === 1) sides.reverse();
      for (const [side, run] of sides) push(`${side} ${n}`, await run());
    }
  }
  const counted: [string, string[]][] = [
    ['hatchery', [CLI, 'serve', '--dir', dirs.get(1)!]],
    ['bare', [bare, '1']],
  ];
  if (BASE) counted.push(['base', [BASE, 'serve', '--dir', dirs.get(1)!]]);
  for (const [side, args] of counted) modules.set(side, await modulesAtList(args));
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log(`cold start to the first tools/list (${ROUNDS} rounds, medians; CLI ${CLI})`);
for (const n of SIZES) {
  const h = median(times.get(`hatchery ${n}`)!);
  const b = median(times.get(`bare ${n}`)!);
  const ratio = h / b;
  const target = TARGETS[n];
  const verdict =
    target === undefined ? '' : `   (target <= ${target}x: ${ratio <= target ? 'met' : 'NOT met'})`;
  const base = BASE ? median(times.get(`base ${n}`)!) : undefined;
  const before =
    base === undefined ? '' : `   base ${base.toFixed(0).padStart(5)} ms (${(base / b).toFixed(2)}x)`;
  console.log(
    `  ${String(n).padStart(5)} files: hatchery ${h.toFixed(0).padStart(5)} ms   bare ${b.toFixed(0).padStart(5)} ms   ratio ${ratio.toFixed(2)}x${verdict}${before}`,
  );
  const cpu = (side: string) => {
    const list = cpus.get(`${side} ${n}`);
    return list?.length ? median(list) : undefined;
  };
  const [hc, bc, basec] = [cpu('hatchery'), cpu('bare'), cpu('base')];
  if (hc !== undefined && bc !== undefined) {
    const baseCpu =
      basec === undefined ? '' : `   base ${basec.toFixed(0).padStart(5)} ms (${(basec / bc).toFixed(2)}x)`;
    console.log(
      `         main-thread CPU: hatchery ${hc.toFixed(0).padStart(5)} ms   bare ${bc.toFixed(0).padStart(5)} ms   ratio ${(hc / bc).toFixed(2)}x${baseCpu}`,
    );
  }
  const hCall = median(calls.get(`hatchery ${n}`)!);
  const bCall = median(calls.get(`bare ${n}`)!);
  const baseCall = BASE ? median(calls.get(`base ${n}`)!) : undefined;
  console.log(
    `         first tools/call answered: hatchery ${hCall.toFixed(0).padStart(5)} ms   bare ${bCall.toFixed(0).padStart(5)} ms   ratio ${(hCall / bCall).toFixed(2)}x${baseCall === undefined ? '' : `   base ${baseCall.toFixed(0).padStart(5)} ms (${(baseCall / bCall).toFixed(2)}x)`}`,
  );
}
const counts = [...modules].map(([side, m]) => `${side} ${m.ours + m.deps} (${m.ours} own)`);
console.log(`  modules loaded before the first tools/list answer, 1 file: ${counts.join('   ')}`);
if (BASE) console.log(`  base: ${BASE}`);
