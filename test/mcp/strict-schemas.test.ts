/**
 * Issue 13: the OpenAI Agents SDK logged "Error converting MCP schema to strict mode" for
 * hatchery_list (an object with no properties and no additionalProperties), hatchery_run and
 * hatchery_start (a free-form `inputs` object) on every run, and used them without strict mode.
 * Every tool this server lists must now pass the SDK's conversion. Issue 37: no input schema types a
 * property as nullable (`["string", "null"]`), which some clients' strict modes warn about: optional
 * arguments are left out of `required`; strict clients still send null for every optional argument,
 * which means "not given".
 */
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { GENERIC_TOOLS } from '../../src/mcp/generic/tools.js';
import { TEST_STATE } from '../helpers.js';
import {
  CLI,
  droneDef,
  EXAMPLES,
  echoDef,
  hatcheryDir,
  inMemory,
  jsonOf,
  textOf,
  writeHatchery,
} from './helpers.js';
import { agentsSdkStrict, strictProblems } from './openai-strict.js';

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function serve(dir: string) {
  const s = await inMemory(dir, { server: { watch: false } });
  cleanups.push(s.close);
  return s;
}

describe('the rules themselves', () => {
  it('refuse the schemas the generic tools had before (so passing them means something)', () => {
    const oldList = { type: 'object', properties: {}, required: [] };
    expect(agentsSdkStrict(oldList).error).toMatch(/open JSON schema object/);
    const oldRun = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        input: { type: 'string' },
        inputs: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['name'],
    };
    expect(agentsSdkStrict(oldRun).error).toMatch(
      /^\(root\)\.inputs: Cannot convert an open JSON schema object/,
    );
    expect(strictProblems(oldRun)).toEqual(
      expect.arrayContaining([
        '(root): an object needs "additionalProperties": false',
        '(root).input: every property must be required (optional: a union with null)',
        '(root).inputs: an object needs "properties"',
      ]),
    );
    expect(
      strictProblems({
        type: 'object',
        properties: { a: { type: 'string', default: 'x' } },
        required: ['a'],
        additionalProperties: false,
      }),
    ).toEqual(['(root).a: keyword "default" is not supported']);
  });
});

describe('input schemas convert to OpenAI strict mode', () => {
  it('every generic tool, as listed to clients, converts, and the converted schema is strict', async () => {
    const { client } = await serve(hatcheryDir());
    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => t.name).sort()).toEqual(GENERIC_TOOLS.map((t) => t.name).sort());
    for (const t of listed) {
      const schema = t.inputSchema as Record<string, unknown>;
      // Closed objects with declared properties: only `required` differs from a strict schema.
      expect(schema.additionalProperties).toBe(false);
      const converted = agentsSdkStrict(schema);
      expect({ tool: t.name, error: converted.error }).toEqual({ tool: t.name, error: undefined });
      expect({ tool: t.name, problems: strictProblems(converted.schema) }).toEqual({
        tool: t.name,
        problems: [],
      });
    }
  });

  it('every hatchery tool of the example folder converts, and the converted schema is strict', async () => {
    const { client } = await serve(EXAMPLES);
    const tools = (await client.listTools()).tools.filter((t) => !t.name.startsWith('hatchery_'));
    expect(tools.length).toBeGreaterThan(3);
    for (const t of tools) {
      const converted = agentsSdkStrict(t.inputSchema as Record<string, unknown>);
      expect({ tool: t.name, error: converted.error }).toEqual({ tool: t.name, error: undefined });
      expect({ tool: t.name, problems: strictProblems(converted.schema) }).toEqual({
        tool: t.name,
        problems: [],
      });
    }
  });
});

/** Every place in a JSON Schema where null is a type: `type: "null"`, or "null" in a type list. */
function nullTypes(schema: unknown, at = '(root)'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => nullTypes(s, `${at}[${i}]`));
  if (schema === null || typeof schema !== 'object') return [];
  const found: string[] = [];
  const s = schema as Record<string, unknown>;
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) found.push(at);
  for (const [k, v] of Object.entries(s)) if (k !== 'type') found.push(...nullTypes(v, `${at}.${k}`));
  return found;
}

describe('no nullable types (issue 37)', () => {
  it.each([
    ['2025-11-25', undefined],
    ['2026-07-28', MODERN],
  ] as const)(
    'a %s client listing the built server sees optional arguments, never a null type',
    async (_, options) => {
      const client = new V2Client({ name: 'lister', version: '1.0.0' }, options);
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'serve', '--dir', EXAMPLES],
          env: { HATCHERY_STATE: TEST_STATE },
          stderr: 'ignore',
        }),
      );
      cleanups.push(() => client.close());
      expect(client.getProtocolEra()).toBe(options ? 'modern' : 'legacy');
      const tools = (await client.listTools()).tools;
      expect(tools.length).toBeGreaterThan(GENERIC_TOOLS.length);
      for (const t of tools)
        expect({ tool: t.name, nulls: nullTypes(t.inputSchema) }).toEqual({ tool: t.name, nulls: [] });
      // Optional arguments are optional: only what a call needs is required.
      const required = Object.fromEntries(
        tools
          .filter((t) => t.name.startsWith('hatchery_'))
          .map((t) => [t.name, t.inputSchema.required ?? []]),
      );
      expect(required).toEqual({
        hatchery_list: [],
        hatchery_run: ['name'],
        hatchery_start: ['name'],
        hatchery_status: ['run_id'],
        hatchery_result: ['run_id'],
        hatchery_cancel: ['run_id'],
        hatchery_runs: [],
        hatchery_resume: ['run_id'],
        hatchery_respond: ['run_id', 'answer'],
      });
    },
  );
});

describe('arguments as strict clients send them', () => {
  it('null for every optional argument means "not given"', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'hello.json', echoDef('hello', 'hi '));
    const { client } = await serve(dir);
    const run = await client.callTool({
      name: 'hatchery_run',
      arguments: { name: 'hello', input: 'Ada', inputs: null },
    });
    expect(run.isError).toBeFalsy();
    expect(textOf(run)).toBe('hi Ada');
    const started = jsonOf(
      await client.callTool({
        name: 'hatchery_start',
        arguments: { name: 'hello', input: 'Bo', inputs: null },
      }),
    );
    const result = await client.callTool({
      name: 'hatchery_result',
      arguments: { run_id: started.run_id, wait_seconds: null },
    });
    expect(textOf(result)).toBe('hi Bo');
    const runs = await client.callTool({
      name: 'hatchery_runs',
      arguments: { status: null, hatchery: null, limit: null },
    });
    expect(runs.isError).toBeFalsy();
    const resumed = await client.callTool({
      name: 'hatchery_resume',
      arguments: { run_id: started.run_id, from: null, force: null },
    });
    // Not refused for its nulls: a run that ended well has nothing to resume.
    expect(textOf(resumed)).not.toMatch(/must be|null/);
  });

  it('named inputs as name/value pairs, and the object form clients sent before', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'greet.json', {
      name: 'greet',
      desc: 'greets',
      inputs: { who: 'Who to greet', mood: 'How' },
      nodes: [
        {
          name: 'Say',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: '{{ ctx.mood }} hello {{ ctx.who }}' },
        },
      ],
    });
    const { client } = await serve(dir);
    const pairs = await client.callTool({
      name: 'hatchery_run',
      arguments: {
        name: 'greet',
        input: null,
        inputs: [
          { name: 'who', value: 'Ada' },
          { name: 'mood', value: 'warm' },
        ],
      },
    });
    expect(textOf(pairs)).toBe('warm hello Ada');
    const object = await client.callTool({
      name: 'hatchery_run',
      arguments: { name: 'greet', inputs: { who: 'Bo', mood: 'calm' } },
    });
    expect(textOf(object)).toBe('calm hello Bo');
  });

  it('refuses malformed pairs, a name given twice and a pair for an input the hatchery lacks', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'greet.json', { ...droneDef('greet'), inputs: { who: 'Who' } });
    const { client } = await serve(dir);
    const call = (inputs: unknown) =>
      client.callTool({ name: 'hatchery_run', arguments: { name: 'greet', inputs } });
    const notPair = await call(['who=Ada']);
    expect(notPair.isError).toBe(true);
    expect(jsonOf(notPair)).toEqual({
      error: '"inputs[0]" must be {"name": "<input name>", "value": "<text>"}',
      code: 'USAGE',
    });
    const twice = await call([
      { name: 'who', value: 'a' },
      { name: 'who', value: 'b' },
    ]);
    expect(textOf(twice)).toBe('"inputs" gives "who" twice; give each input once');
    const unknown = await call([{ name: 'woh', value: 'a' }]);
    expect(textOf(unknown)).toMatch(/greet has no argument "woh" \(did you mean "who"\?\)/);
    const proto = await call([{ name: '__proto__', value: 'x' }]);
    expect(textOf(proto)).toMatch(/greet has no argument "__proto__"/);
    expect(textOf(await call('who=Ada'))).toBe(
      '"inputs" must be a list of {"name": "<input name>", "value": "<text>"} pairs',
    );
  });
});
