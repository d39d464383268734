import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS, shellExecTool } from '../../src/tools/builtin/index.js';
import { BUILTIN_TOOL_NAMES, parseToolRef } from '../../src/tools/refs.js';

// tools/refs.ts knows the built-in names without importing the tools (start-up loads no tool to
// parse a reference); these tests keep its list and the real tools from drifting apart.
describe('built-in tool names', () => {
  it('are exactly the names of the built-in tools, shell_exec included', () => {
    const real = [...BUILTIN_TOOLS.values()].map((t) => t.name);
    expect([...BUILTIN_TOOLS.keys()]).toEqual(real);
    expect([...BUILTIN_TOOL_NAMES].sort()).toEqual([...real, shellExecTool.name].sort());
  });

  it('each parses as a built-in reference, and an unknown name lists them all with a suggestion', () => {
    for (const name of BUILTIN_TOOL_NAMES)
      expect(parseToolRef(name)).toEqual({ kind: 'builtin', ref: name, name });
    const bad = parseToolRef('read_fiel');
    expect('error' in bad && bad.error).toContain('did you mean "read_file"');
    for (const name of BUILTIN_TOOL_NAMES) expect('error' in bad && bad.error).toContain(name);
  });
});
