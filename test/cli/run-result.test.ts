/**
 * What a run gives as its result, through the built CLI and a real MCP client against the fake
 * OpenAI server: a supervisor that ends the run leaves the work, not its routing text; a top-level
 * `output` template says what the result is; a drone offered no tools whose model asks for one
 * fails naming the tool instead of answering nothing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { CLI_PATH, type CliFolder, cliFolder } from '../helpers.js';

const { openai } = fakeVendors();

let folder: CliFolder;
beforeEach(() => {
  folder = cliFolder({ prefix: 'hatchery-result-', env, runArgs: ['--input', 'owls', '--no-journal'] });
  openai.reset();
});

const env = () => ({
  OPENAI_API_KEY: 'sk-run-result-0123456789',
  OPENAI_BASE_URL: openai.baseURL,
  HATCHERY_MODEL: 'openai:gpt-test',
});

const choose = (next: string) => ({ toolCalls: [{ name: 'choose_next', args: { next } }] });

const editorial = {
  name: 'editorial',
  desc: 'a supervisor and a writer',
  nodes: [
    {
      name: 'Boss',
      usr_prompt: 'Task: {{ ctx.input }}. Latest draft: {{ out.Writer | default("none") }}',
      route: 'choose',
      next: ['Writer', 'END'],
    },
    { name: 'Writer', desc: 'writes the essay', usr_prompt: 'write about {{ ctx.input }}', next: 'Boss' },
  ],
};

describe('a supervisor that ends the run', () => {
  it('gives the output of the node before it, not its routing text', async () => {
    const file = folder.write('editorial.json', editorial);
    openai.enqueue(
      { text: 'Needs a draft.' },
      choose('Writer'),
      { text: 'Owls hunt at night.' },
      { text: 'Good. ROUTE:END' },
      choose('END'),
    );
    const r = await folder.run(file, ['--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { output: string }).output).toBe('Owls hunt at night.');
  });
});

describe('a top-level output template', () => {
  it('is the result of the run, on the CLI and in an MCP result', async () => {
    const def = {
      ...editorial,
      name: 'edited',
      output: 'Essay: {{ out.Writer }} (reviewed: {{ out.Boss }})',
    };
    const file = folder.write('edited.json', def);
    const replies = () =>
      openai.enqueue(
        { text: 'Needs a draft.' },
        choose('Writer'),
        { text: 'Owls hunt at night.' },
        { text: 'Fine.' },
        choose('END'),
      );
    replies();
    const r = await folder.run(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('Essay: Owls hunt at night. (reviewed: Fine.)');

    replies();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_PATH, '--dir', folder.dir, '--no-journal'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env() },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'result-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'edited', arguments: { input: 'owls' } });
      expect(res.isError, JSON.stringify(res)).toBeFalsy();
      expect((res.structuredContent as { output: string }).output).toBe(
        'Essay: Owls hunt at night. (reviewed: Fine.)',
      );
    } finally {
      await client.close();
    }
  });

  it('is checked when the file loads: a node it names must exist', async () => {
    const file = folder.write('typo.json', { ...editorial, name: 'typo', output: '{{ out.Writr }}' });
    const v = await folder.cli(['validate', file]);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toMatch(/output .*out\.Writr.*did you mean "Writer"/);
  });
});

describe('a drone offered no tools', () => {
  it('fails naming the tool its model asked for, instead of an empty output', async () => {
    const file = folder.write('plain.json', {
      name: 'plain',
      desc: 'one drone',
      nodes: [{ name: 'Answer', usr_prompt: 'look up {{ ctx.input }}' }],
    });
    for (const verbose of [[], ['--verbose']]) {
      openai.enqueue({ toolCalls: [{ name: 'web_search', args: { q: 'owls' } }] });
      const r = await folder.run(file, verbose);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('"web_search"');
      expect(r.stderr).toContain('offers no tools');
      expect(r.stderr).toContain('Answer');
    }
  });
});
