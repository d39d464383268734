import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HatcheryRegistry } from '../../src/mcp/registry.js';
import { tempDir } from '../helpers.js';

/**
 * A deferred start lists files from the first half of their load: a folder of plain and unusual
 * files, with broken files, a duplicate name and a non-hatchery, must list the same tools and report
 * the same problems as a whole load.
 */
const FILES: Record<string, unknown> = {
  'a_plain.json': {
    name: 'plain',
    desc: 'Plain drones',
    inputs: { topic: 'What about?' },
    nodes: [
      { name: 'W', usr_prompt: 'Write about {{ ctx.topic }}: {{ ctx.input }}', next: 'T' },
      { name: 'T', type: 'tool', tool_name: 'echo', tool_args: { text: '{{ out.W }}' } },
    ],
  },
  'b_meta.json': {
    $schema: '../schema/hatchery.schema.json',
    _comment: 'comments and $schema are dropped',
    name: 'meta',
    desc: 'With meta keys',
    nodes: [{ _note: 'x', name: 'A', usr_prompt: '{{ ctx.input }}' }],
  },
  'c_alias.json': {
    name: 'alias',
    description: 'Old spellings',
    nodes: [{ user_prompt: 'Hi {{ ctx.input }}', system_prompt: 'Be brief' }],
  },
  'd_spawn.json': {
    name: 'spawner',
    desc: 'Spawns helpers',
    nodes: [{ usr_prompt: '{{ ctx.input }}', spawn: { templates: [{ name: 'self', desc: 'A copy' }] } }],
  },
  'e_bad_next.json': { name: 'bad_next', desc: 'd', nodes: [{ usr_prompt: 'x', next: 'Nowhere' }] },
  'f_bad_type.json': { name: 'bad_type', desc: 'd', nodes: [{ usr_prompt: 'x', max_visits: 0 }] },
  'g_dup.json': { name: 'plain', desc: 'Same name', nodes: [{ usr_prompt: 'x' }] },
  'h_yaml.yaml': 'name: yam\ndesc: YAML\nnodes:\n  - usr_prompt: "{{ ctx.input }}"\n',
  'package.json': { name: 'not-a-hatchery', version: '1.0.0' },
};

async function listing(defer: boolean): Promise<{ tools: unknown[]; problems: string[]; files: string[] }> {
  const dir = tempDir();
  for (const [name, content] of Object.entries(FILES))
    writeFileSync(
      path.join(dir, name),
      typeof content === 'string' ? content : JSON.stringify(content, null, 2),
    );
  const reg = new HatcheryRegistry(dir);
  const change = await reg.loadAll({ defer });
  return {
    tools: reg.listed().map((e) => e.tool),
    problems: change.problems.map((p) => p.replaceAll(dir, '<dir>')).sort(),
    files: reg
      .loadedFiles()
      .map((f) => path.basename(f))
      .sort(),
  };
}

describe('a deferred start', () => {
  it('lists the same tools and reports the same problems as a whole load', async () => {
    const deferred = await listing(true);
    const whole = await listing(false);
    expect(deferred).toEqual(whole);
    expect(deferred.tools.map((t) => (t as { name: string }).name).sort()).toEqual([
      'alias',
      'meta',
      'plain',
      'spawner',
      'yam',
    ]);
    expect(deferred.problems.join('\n')).toMatch(/no node named "Nowhere"/);
    expect(deferred.problems.join('\n')).toMatch(/max_visits/);
    expect(deferred.problems.join('\n')).toMatch(/already used by/);
  });
});
