import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers.js';

const fixture = (name: string) => path.join('test', 'fixtures', 'authoring', name);

/** Files that `validate` once called ok and that failed at run time (issue 10). */
describe('validate reports what used to fail only at run time', () => {
  it('an undefined ctx variable in a later node', async () => {
    const r = await runCli(['validate', fixture('undefined-variable.json')], { cwd: REPO_ROOT });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `${fixture('undefined-variable.json')}: nodes/1/usr_prompt: ctx.outlines (line 2, column 4 of the template) is not defined when "Write" runs: no declared input, files entry or save_output has that name (did you mean "outline"?)`,
    );
  });

  it('a node: tool naming a missing node', async () => {
    const r = await runCli(['validate', fixture('missing-node-tool.json')], { cwd: REPO_ROOT });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `${fixture('missing-node-tool.json')}: nodes/0/tools/0: "node:Lookup": this file has no node named "Lookup" (did you mean "LookUp"?); nodes: Answer, LookUp`,
    );
  });

  it('nodes nothing routes to', async () => {
    const r = await runCli(['validate', fixture('unrouted-nodes.json')], { cwd: REPO_ROOT });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `${fixture('unrouted-nodes.json')}: nodes/2/tool_args/text: out.Summarize (line 3, column 11 of the template) is not set when "Publish" runs: node "Summarize" never runs: nothing routes to it`,
    );
  });
});
