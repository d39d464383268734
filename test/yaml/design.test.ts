import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { designTemplate, splitCommand } from '../../src/loader/design.js';
import { loadHatcheryText } from '../../src/loader/load.js';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, tempDir } from '../helpers.js';

/** The definition a design file maps to (throws with the message when invalid). */
function defOf(text: string, file = '/h/flow.yaml'): Record<string, unknown> {
  const res = loadHatcheryText(text, file);
  if (!res.ok) throw new Error(res.error.message);
  return res.hatchery.def as unknown as Record<string, unknown>;
}

function errorOf(text: string, file = '/h/flow.yaml'): string {
  const res = loadHatcheryText(text, file);
  if (res.ok) throw new Error('expected the file to be invalid');
  return res.error.message;
}

describe('the YAML multi-agent design, mapped onto node kinds', () => {
  it('maps every design node type, provider + model, :: paths and {{ node }} references', () => {
    const def = defOf(`nodes:
  - id: q
    type: trigger.stdin
    prompt: "Question: "
    next: ::nodes::notes
  - id: notes
    type: trigger.file
    path: notes.md
    next: nodes::ask
  - id: ask
    type: agent.completion
    provider: anthropic
    model: claude-test
    system_message: "Notes: {{ notes }}"
    user_message: "{{ q }} / {{ ::output::notes }} / {{ output::q | upper }}"
    next: shout
  - id: shout
    type: script
    cmd: tr "a-z" 'A-Z'
    next: save
  - id: save
    type: event.file
    path: answer.txt
    next: show
  - id: show
    type: event.stdout
    prefix: "Saved: "
    next: scenario.terminate
`);
    expect(def).toEqual({
      name: 'flow',
      desc: 'Runs the flow workflow',
      input_prompt: 'Question: ',
      nodes: [
        {
          name: 'q',
          desc: 'Question: ',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: '{{ ctx.input }}' },
          next: 'notes',
        },
        { name: 'notes', type: 'tool', tool_name: 'read_file', tool_args: { path: 'notes.md' }, next: 'ask' },
        {
          name: 'ask',
          model: 'anthropic:claude-test',
          sys_prompt: 'Notes: {{ out.notes }}',
          usr_prompt: '{{ out.q }} / {{ out.notes }} / {{ out.q | upper }}',
          next: 'shout',
        },
        { name: 'shout', type: 'script', cmd: ['tr', 'a-z', 'A-Z'], next: 'save' },
        {
          name: 'save',
          type: 'tool',
          tool_name: 'write_file',
          tool_args: { path: 'answer.txt', content: '{{ out.shout }}' },
          next: 'show',
        },
        {
          name: 'show',
          type: 'tool',
          tool_name: 'echo',
          tool_args: { text: 'Saved: {{ out.shout }}' },
          next: 'END',
        },
      ],
    });
  });

  it('a second trigger.stdin is a declared input named by its id, its prompt the description', () => {
    const def = defOf(`id: two
description: two inputs
nodes:
  - { id: a, type: trigger.stdin, next: b }
  - { id: b, type: trigger.stdin, prompt: "Tone: ", next: c }
  - { id: c, type: agent.completion, model: gpt-test, user_message: "{{ a }} in a {{ b }} tone" }
`);
    expect(def.inputs).toEqual({ b: 'Tone' });
    expect((def.nodes as unknown[])[1]).toMatchObject({ tool_args: { text: '{{ ctx.b }}' } });
    expect((def.nodes as unknown[])[2]).toMatchObject({ usr_prompt: '{{ out.a }} in a {{ out.b }} tone' });
  });

  it('a scenario.termination node ends the run, passing on the text before it', () => {
    const def = defOf(`nodes:
  - { id: a, type: agent.completion, model: gpt-test, user_message: hi, next: done }
  - { id: done, type: scenario.termination }
`);
    expect((def.nodes as unknown[])[1]).toEqual({
      name: 'done',
      type: 'tool',
      tool_name: 'echo',
      tool_args: { text: '{{ out.a }}' },
      next: 'END',
    });
  });

  it('problems name the keys as the user wrote them, with their lines', () => {
    expect(
      errorOf(`nodes:
  - id: ask
    type: agent.completion
    provider: openai
    user_message: hi
    next: show
  - id: show
    type: event.stdout
  - id: orphan
    type: event.stdout
  - id: bad id
    type: script
    cmd: 7
`).split('\n'),
    ).toEqual([
      '/h/flow.yaml: nodes/0/provider (line 4, column 5): provider "openai" needs a model; add e.g. "model: gpt-4o-mini" next to it',
      '/h/flow.yaml: nodes/2/type (line 10, column 5): an event.stdout node takes the output of the node before it, but no node has "next: orphan"; let exactly one node lead to it (give each branch its own output node)',
      '/h/flow.yaml: nodes/3/id (line 11, column 5): must start with a letter or _ and contain only letters, digits, _, - and .',
      '/h/flow.yaml: nodes/3/cmd (line 13, column 5): must be a list of strings, not the number 7',
    ]);
  });

  it('suggests the design type a misspelt type was meant to be', () => {
    const err = errorOf(`nodes:
  - id: ask
    type: agent.complete
    provider: openai
    model: gpt-test
    user_message: hi
`);
    expect(err).toContain('unknown node type "agent.complete" (did you mean "agent.completion"?)');
  });

  it('template errors point at the field as written; start takes a :: path', () => {
    expect(
      errorOf(`start: ::nodes::a
nodes:
  - id: a
    type: agent.completion
    model: gpt-test
    user_message: "{{ oops"
    next: show
  - { id: show, type: event.stdout, prefix: "{{ bad" }
`).split('\n'),
    ).toEqual([
      '/h/flow.yaml: nodes/0/usr_prompt (line 6, column 5): template syntax error at line 1, column 1 of the template: expected variable end',
      '/h/flow.yaml: nodes/1/prefix (line 8, column 37): template syntax error at line 1, column 7 of the template: expected variable end',
    ]);
  });

  it('an output node after two branches is refused, naming both', () => {
    expect(
      errorOf(`nodes:
  - { id: pick, type: agent.completion, model: gpt-test, user_message: hi, next: [a, b] }
  - { id: a, type: agent.completion, model: gpt-test, user_message: hi, next: show }
  - { id: b, type: agent.completion, model: gpt-test, user_message: hi, next: show }
  - { id: show, type: event.stdout }
`),
    ).toBe(
      '/h/flow.yaml: nodes/3/type (line 5, column 17): an event.stdout node takes the output of the node before it, but 2 nodes (a, b) have "next: show"; let exactly one node lead to it (give each branch its own output node)',
    );
  });

  it('design templates: node names become out.<name>, other words are left alone', () => {
    const names = new Set(['a', 'my-node', 'b']);
    expect(
      designTemplate(
        '{{ a }} {{ my-node }} {{ ctx.a }} {{ "a" }} {{ x | a }} a {% if b %}{{ b.c }}{% endif %}',
        names,
      ),
    ).toBe(
      '{{ out.a }} {{ out["my-node"] }} {{ ctx.a }} {{ "a" }} {{ x | a }} a {% if out.b %}{{ out.b.c }}{% endif %}',
    );
    expect(designTemplate('{{ ::output::my-node::field }}', names)).toBe('{{ out["my-node"].field }}');
    expect(splitCommand(`python3 -c "print('a b')" 'x y' z\\"`)).toEqual([
      'python3',
      '-c',
      "print('a b')",
      'x y',
      'z\\"',
    ]);
  });
});

describe('the design example runs unchanged through the CLI', () => {
  const { openai } = fakeVendors();
  const env = () => ({ OPENAI_API_KEY: 'sk-test-never-printed', OPENAI_BASE_URL: openai.baseURL });

  it('hatchery/design-qa.yaml: stdin in, two agents (the second reusing the first), "Answer: " out', async () => {
    openai.reset();
    openai.enqueue('MCP is a protocol for tools.', 'MCP connects models to tools.');
    const r = await runCli(['run', 'hatchery/design-qa.yaml', '--quiet'], {
      env: env(),
      stdin: 'What is MCP?\n',
    });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe('Answer: MCP connects models to tools.\n');
    expect(openai.requests).toHaveLength(2);
    expect(openai.requests[0]!.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a concise expert. Answer in plain words.' },
        { role: 'user', content: 'What is MCP?' },
      ],
    });
    // agent_reuse: the critic continues the answer's conversation.
    const second = openai.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(second.messages[3]!.content).toBe(
      'Tighten your answer to at most three sentences. Keep every fact.\nThe draft was:\nMCP is a protocol for tools.\n',
    );
  });

  it('trigger.file, script, event.file and event.stdout in a folder of its own', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'notes.md'), 'hello notes');
    const file = path.join(dir, 'files.yaml');
    writeFileSync(
      file,
      `nodes:
  - { id: notes, type: trigger.file, path: notes.md, next: shout }
  - { id: shout, type: script, cmd: tr a-z A-Z, next: save }
  - { id: save, type: event.file, path: out/shout.txt, next: show }
  - { id: show, type: event.stdout, prefix: "Done: ", next: ::scenario::termination }
`,
    );
    // event.file writes next to the hatchery file, a folder runs may write in only when allowed.
    const r = await runCli(['run', file, '--quiet', '--allow-write', dir], { cwd: dir });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    // An event.file hands on the text it wrote, not its tool's status.
    expect(r.stdout).toBe('Done: HELLO NOTES\n');
    expect(readFileSync(path.join(dir, 'out/shout.txt'), 'utf8')).toBe('HELLO NOTES');
  });
});
