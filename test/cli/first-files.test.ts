/**
 * What a new user's first files meet, through the built CLI against the fake OpenAI server: map
 * items of a structured node are values, `fromjson` reads JSON text, and `validate` reports an
 * unknown filter or test (a Jinja2 habit) before any model is paid, with what to write instead, and
 * every problem of a file in one pass (a graph error no longer hides the templates and tools); a
 * script finds relative files where the user works, and says where it ran when it fails.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { CLI_PATH, type CliFolder, cliFolder, runCli } from '../helpers.js';

const { openai } = fakeVendors();

let folder: CliFolder;
beforeEach(() => {
  folder = cliFolder({ prefix: 'hatchery-first-', env, runArgs: ['--input', 'go', '--no-journal'] });
  openai.reset();
});

const env = () => ({
  OPENAI_API_KEY: 'sk-first-files-0123456789',
  OPENAI_BASE_URL: openai.baseURL,
  HATCHERY_MODEL: 'openai:gpt-test',
});

const SECTION = {
  type: 'object',
  properties: { heading: { type: 'string' }, words: { type: 'integer' } },
  required: ['heading', 'words'],
};

describe('map items of a structured node', () => {
  it('are values templates read by field, and the map output is a JSON list of them', async () => {
    const file = folder.write('sections.json', {
      name: 'sections',
      desc: 'drafts sections',
      nodes: [
        { name: 'M', type: 'map', items: '["intro", "body"]', node: 'Draft', next: 'Show' },
        { name: 'Draft', usr_prompt: 'a section about {{ ctx.item }}', output_schema: SECTION },
        {
          name: 'Show',
          type: 'script',
          cmd: ['cat'],
          stdin:
            '{{ out.M[0].heading }}/{{ out.M[1].words + 1 }}/{{ out.M[0] is string }}/{{ out.M | join(",", "heading") }}',
        },
      ],
    });
    openai.enqueue({ text: '{"heading":"Intro","words":120}' }, { text: '{"heading":"Body","words":300}' });
    const r = await folder.run(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('Intro/301/false/Intro,Body');
  });

  it('as the last node, gives the list of objects as the run output', async () => {
    const file = folder.write('last.json', {
      name: 'last',
      desc: 'drafts sections',
      nodes: [
        { name: 'M', type: 'map', items: '["intro"]', node: 'Draft' },
        { name: 'Draft', usr_prompt: 'a section about {{ ctx.item }}', output_schema: SECTION },
      ],
    });
    openai.enqueue({ text: '{"heading":"Intro","words":120}' });
    const r = await folder.run(file, ['--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { output: string; value: unknown };
    expect(JSON.parse(result.output)).toEqual([{ heading: 'Intro', words: 120 }]);
  });
});

describe('the fromjson filter', () => {
  it('reads text that holds JSON, and names bad JSON', async () => {
    const ok = folder.write('ok.json', {
      name: 'ok',
      desc: 'parses',
      nodes: [
        { name: 'Raw', type: 'script', cmd: ['echo', '{"title": "Owls", "tags": ["a", "b"]}'], next: 'Use' },
        {
          name: 'Use',
          type: 'script',
          cmd: ['cat'],
          stdin: '{% set v = out.Raw | fromjson %}{{ v.title }}:{{ v.tags | length }}',
        },
      ],
    });
    const r = await folder.run(ok);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('Owls:2');
    const bad = folder.write('bad.json', {
      name: 'bad',
      desc: 'parses',
      nodes: [
        { name: 'Raw', type: 'script', cmd: ['echo', 'not json'], next: 'Use' },
        { name: 'Use', type: 'script', cmd: ['cat'], stdin: '{{ (out.Raw | fromjson).title }}' },
      ],
    });
    const r2 = await folder.run(bad);
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toContain('fromjson: the text is not JSON');
    expect(r2.stderr).toContain('Use');
  });
});

describe('validate, on a filter or test the templates lack', () => {
  it('reports a Jinja2 filter with what to write instead, before any model call', async () => {
    const file = folder.write('jinja.json', {
      name: 'jinja',
      desc: 'outline then headings',
      nodes: [
        { name: 'Outline', usr_prompt: 'outline {{ ctx.input }}', next: 'Headings' },
        { name: 'Headings', usr_prompt: "list: {{ out.Outline | map('heading') | join(', ') }}" },
      ],
    });
    const v = await folder.cli(['validate', file]);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toContain('unknown filter "map"');
    expect(v.stdout + v.stderr).toContain('join(", ", "heading")');
    expect(v.stdout + v.stderr).toContain('nodes/1/usr_prompt');
    const r = await folder.run(file);
    expect(r.code).not.toBe(0);
    expect(openai.requests).toHaveLength(0);
  });

  it('suggests the nearest name for a misspelt filter, in simple and in parsed templates', async () => {
    for (const prompt of ['{{ ctx.input | uper }}', '{% if ctx.input %}{{ ctx.input | uper }}{% endif %}']) {
      const file = folder.write('typo.json', {
        name: 'typo',
        desc: 'd',
        nodes: [{ name: 'A', usr_prompt: prompt }],
      });
      const v = await folder.cli(['validate', file]);
      expect(v.code, prompt).not.toBe(0);
      expect(v.stdout + v.stderr, prompt).toMatch(/unknown filter "uper" \(did you mean "upper"\?\)/);
    }
  });

  it('reports a Jinja2 test and a missing test, and passes the ones nunjucks has', async () => {
    const bad = folder.write('tests.json', {
      name: 'tests',
      desc: 'd',
      nodes: [{ name: 'A', usr_prompt: '{% if ctx.input is sequence %}many{% endif %}' }],
    });
    const v = await folder.cli(['validate', bad]);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toContain('unknown test "sequence"');
    expect(v.stdout + v.stderr).toContain('is iterable');
    const good = folder.write('good.json', {
      name: 'good',
      desc: 'd',
      nodes: [
        {
          name: 'A',
          usr_prompt:
            '{% if ctx.input is string and ctx.input is not none %}{{ ctx.input | upper | fromjson | default("x") }}{% endif %}{% filter lower %}X{% endfilter %}',
        },
      ],
    });
    const ok = await folder.cli(['validate', good]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });
});

describe('validate, on a file with several problems', () => {
  it('reports graph, key, template, tool and argument problems in one pass', async () => {
    const file = folder.write('many.json', {
      name: 'many',
      desc: 'many problems',
      nodes: [
        { name: 'Plan', usr_prompt: 'plan {{ ctx.input }}', next: 'Wrte' },
        { name: 'Write', usr_prompt: 'write {{ out.Plan | uper }}', tools: ['nosuch_tool'], next: 'Check' },
        { name: 'Check', type: 'script', cmd: ['cat'], temperature: 3, next: 'Read' },
        { name: 'Read', type: 'baneling', tool: 'read_file', tool_args: { pathh: 'x' } },
      ],
    });
    const v = await folder.cli(['validate', file]);
    expect(v.code).not.toBe(0);
    const out = v.stdout + v.stderr;
    const lines = out.split('\n').filter((l) => l.startsWith(file));
    expect(lines.some((l) => l.includes('nodes/0/next') && l.includes('no node named "Wrte"'))).toBe(true);
    expect(lines.some((l) => l.includes('nodes/1/usr_prompt') && l.includes('unknown filter "uper"'))).toBe(
      true,
    );
    expect(lines.some((l) => l.includes('nodes/1/tools/0') && l.includes('unknown tool "nosuch_tool"'))).toBe(
      true,
    );
    expect(lines.some((l) => l.includes('nodes/2/temperature'))).toBe(true);
    expect(
      lines.some((l) => l.includes('nodes/3/tool_args/pathh') && l.includes('did you mean "path"')),
    ).toBe(true);
    // Each once, and no warning that only follows from the errors (Write is unreachable through "Wrte").
    expect(new Set(lines).size).toBe(lines.length);
    expect(out).not.toContain('unreachable');
  });
});

describe("a script's working folder", () => {
  it('is where the command was started (the hatchery folder too), a node cwd, and named on failure', async () => {
    const flows = path.join(folder.dir, 'flows');
    const work = path.join(folder.dir, 'work');
    mkdirSync(path.join(flows, 'data'), { recursive: true });
    mkdirSync(work);
    writeFileSync(path.join(flows, 'notes.txt'), 'beside the file\n');
    writeFileSync(path.join(flows, 'data', 'notes.txt'), 'in data\n');
    writeFileSync(path.join(work, 'notes.txt'), 'in the work folder\n');
    const cat = (name: string, extra: Record<string, unknown> = {}) => {
      const file = path.join(flows, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          name,
          desc: 'reads notes',
          nodes: [{ name: 'Cat', type: 'script', cmd: ['cat', 'notes.txt'], ...extra }],
        }),
      );
      return file;
    };
    const file = cat('notes');
    const inFlows = await runCli(['run', file, '--no-journal'], { env: env(), cwd: flows });
    expect(inFlows.code, inFlows.stderr).toBe(0);
    expect(inFlows.stdout.trim()).toBe('beside the file');
    const inWork = await runCli(['run', file, '--no-journal'], { env: env(), cwd: work });
    expect(inWork.stdout.trim()).toBe('in the work folder');
    const own = await runCli(['run', cat('own', { cwd: 'data' }), '--no-journal'], { env: env(), cwd: work });
    expect(own.stdout.trim()).toBe('in data');
    const missing = await runCli(['validate', cat('gone', { cwd: 'nowhere' })], { env: env(), cwd: work });
    expect(missing.code).not.toBe(0);
    expect(missing.stdout + missing.stderr).toMatch(/nodes\/0\/cwd.*does not exist/);
    const empty = mkdtempSync(path.join(folder.dir, 'empty-'));
    const failed = await runCli(['run', file, '--no-journal'], { env: env(), cwd: empty });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain(`(it ran in ${empty})`);
  });

  it("served from / (as a desktop client starts a server), is the hatchery file's folder", async () => {
    const flows = path.join(folder.dir, 'served');
    mkdirSync(flows);
    writeFileSync(path.join(flows, 'notes.txt'), 'served notes\n');
    writeFileSync(
      path.join(flows, 'notes.json'),
      JSON.stringify({
        name: 'notes',
        desc: 'reads notes',
        nodes: [{ type: 'script', cmd: ['cat', 'notes.txt'] }],
      }),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_PATH, '--dir', flows, '--no-journal'],
      cwd: '/',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'notes', arguments: { input: '' } });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect((r.structuredContent as { output: string }).output.trim()).toBe('served notes');
    } finally {
      await client.close();
    }
  });
});
