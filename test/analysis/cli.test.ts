import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers.js';

const fixture = (name: string) => path.join('test', 'fixtures', 'authoring', name);

/** Files that `validate` once called ok and that failed at run time (issue 10). */
describe('validate reports what used to fail only at run time', () => {
  it('an undefined ctx variable in a later node', async () => {
    const r = await runCli(['validate', fixture('undefined-variable.json')], { cwd: REPO_ROOT });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(
      `${fixture('undefined-variable.json')}: nodes/1/usr_prompt (line 14, column 7): ctx.outlines (line 2, column 4 of the template) is not defined when "Write" runs: no declared input, files entry or save_output has that name (did you mean "outline"?); declare "outlines" in "inputs", or add "save_output": "outlines" to a node that runs before "Write", or give a default: {{ ctx.outlines | default("") }}\n`,
    );
  });

  it('a node: tool naming a missing node', async () => {
    const r = await runCli(['validate', fixture('missing-node-tool.json')], { cwd: REPO_ROOT });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(
      `${fixture('missing-node-tool.json')}: nodes/0/tools/0 (line 8, column 17): "node:Lookup": this file has no node named "Lookup" (did you mean "LookUp"?); nodes: Answer, LookUp; node:<name> runs the node of this file with that name\n` +
        // A failed file lists its warnings too: the typo also leaves LookUp unreached.
        `${fixture('missing-node-tool.json')}: nodes/1 (line 10, column 5): warning: node "LookUp" is unreachable: no run from the start node "Answer" gets to it (nothing routes to it through next, on_limit, branches, a map's node, a loop's body or a node: tool); route to it from a node that runs, or remove it\n`,
    );
  });

  it('nodes nothing routes to: a warning on a file that loads; it fails the check with --strict', async () => {
    const file = fixture('unrouted-nodes.json');
    const [plain, strict] = await Promise.all([
      runCli(['validate', file], { cwd: REPO_ROOT }),
      runCli(['validate', '--strict', file], { cwd: REPO_ROOT }),
    ]);
    const expected =
      `${file}: ok (unrouted_nodes, 3 nodes, needs input)\n` +
      `${file}: nodes/1 (line 6, column 5): warning: node "Summarize" is unreachable: no run from the start node "Draft" gets to it (nothing routes to it through next, on_limit, branches, a map's node, a loop's body or a node: tool); route to it from a node that runs, or remove it\n`;
    expect(plain).toMatchObject({ code: 0, stdout: expected });
    expect(strict).toMatchObject({ code: 3, stdout: expected });
  });
});
