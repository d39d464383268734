import { mkdirSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { JS_RECHECK_MS } from '../../src/tools/js.js';
import { hatch, load, tempDir } from '../helpers.js';

/**
 * A run checks a js: module's path and file once per JS_RECHECK_MS instead of on every call; edits
 * and swapped symlinks must still be seen by the next run, and by a long run after that time.
 */
const version = (v: string) => `
export const verSchema = { type: 'object', properties: { text: { type: 'string' } } };
export function ver(args) { return '${v}:' + (args.text ?? ''); }
`;

/** Writes the module with a new modification time (two writes within one clock tick look alike). */
let tick = Date.now();
function write(file: string, text: string): void {
  writeFileSync(file, text);
  tick += 2000;
  utimesSync(file, new Date(tick), new Date(tick));
}

const runtime = () => new Runtime({ providers: { openai: new ScriptedProvider(() => 'ok') }, env: {} });

describe('js: modules are checked once per run, and edits are still picked up', () => {
  it('a module edited between two calls is used by the next run', async () => {
    const dir = tempDir();
    const mod = path.join(dir, 'tool.mjs');
    write(mod, version('v1'));
    const h = load(
      hatch([{ type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: '{{ ctx.input }}' } }]),
      dir,
    );
    const rt = runtime();
    expect((await rt.run(h, { input: 'a' })).output).toBe('v1:a');
    write(mod, version('v2'));
    expect((await rt.run(h, { input: 'b' })).output).toBe('v2:b');
  });

  it('an edit that changes an argument’s type in the schema changes what the same node passes', async () => {
    // A one-expression argument keeps its value's JSON type unless the tool's schema says string:
    // the node finds each argument's schema once per tool, and an edited module is another tool.
    const typed = (type: string) => `
export const kindSchema = { type: 'object', properties: { n: { type: '${type}' } } };
export function kind(args) { return typeof args.n + ':' + JSON.stringify(args.n); }
`;
    const dir = tempDir();
    const mod = path.join(dir, 'tool.mjs');
    write(mod, typed('string'));
    const h = load(
      hatch([{ type: 'tool', tool_name: 'js:tool.mjs#kind', tool_args: { n: '{{ ctx.input | int + 2 }}' } }]),
      dir,
    );
    const rt = runtime();
    expect((await rt.run(h, { input: '40' })).output).toBe('string:"42"');
    write(mod, typed('integer'));
    expect((await rt.run(h, { input: '40' })).output).toBe('number:42');
    write(mod, typed('string'));
    expect((await rt.run(h, { input: '5' })).output).toBe('string:"7"');
    await rt.close();
  });

  it('a long run sees an edit made during it once JS_RECHECK_MS has passed', async () => {
    const dir = tempDir();
    const mod = path.join(dir, 'tool.mjs');
    write(mod, version('v1'));
    // A tool of the run itself edits the module, then waits out the recheck time.
    writeFileSync(
      path.join(dir, 'edit.mjs'),
      `import { writeFileSync, utimesSync } from 'node:fs';
export const editSchema = { type: 'object', properties: {} };
export async function edit() {
  writeFileSync(${JSON.stringify(mod)}, ${JSON.stringify(version('v2'))});
  const t = new Date(${tick} + 60000);
  utimesSync(${JSON.stringify(mod)}, t, t);
  await new Promise((r) => setTimeout(r, ${JS_RECHECK_MS + 50}));
  return 'edited';
}
`,
    );
    const h = load(
      hatch([
        {
          name: 'Before',
          type: 'tool',
          tool_name: 'js:tool.mjs#ver',
          tool_args: { text: 'x' },
          next: 'Edit',
        },
        { name: 'Edit', type: 'tool', tool_name: 'js:edit.mjs#edit', next: 'After' },
        { name: 'After', type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: 'y' } },
      ]),
      dir,
    );
    const res = await runtime().run(h);
    expect(res.outputs).toEqual({ Before: 'v1:x', Edit: 'edited', After: 'v2:y' });
  });

  it('a symlink swapped to point outside the roots is refused by the next run', async () => {
    const dir = tempDir();
    const outside = tempDir();
    mkdirSync(path.join(dir, 'lib'));
    write(path.join(dir, 'lib', 'real.mjs'), version('inside'));
    write(path.join(outside, 'evil.mjs'), version('outside'));
    const link = path.join(dir, 'tool.mjs');
    symlinkSync(path.join(dir, 'lib', 'real.mjs'), link);
    const h = load(hatch([{ type: 'tool', tool_name: 'js:tool.mjs#ver', tool_args: { text: 'a' } }]), dir);
    const rt = runtime();
    expect((await rt.run(h)).output).toBe('inside:a');
    // Swapped in one step, as an attacker would.
    const tmp = path.join(dir, 'tool.tmp');
    symlinkSync(path.join(outside, 'evil.mjs'), tmp);
    renameSync(tmp, link);
    const err = (await rt.run(h).catch((e: unknown) => e)) as HatcheryError;
    expect(err.code).toBe('PATH_DENIED');
  });

  it('every branch of a wide fan-out gets its own result from one module', async () => {
    const dir = tempDir();
    write(path.join(dir, 'tool.mjs'), version('v1'));
    const names = Array.from({ length: 300 }, (_, i) => `B${i}`);
    const h = load(
      hatch(
        [
          { name: 'P', type: 'parallel', branches: names },
          ...names.map((name) => ({
            name,
            type: 'tool',
            tool_name: 'js:./tool.mjs#ver',
            tool_args: { text: `{{ ctx.input }}-${name}` },
          })),
        ],
        { max_steps: 400 },
      ),
      dir,
    );
    const res = await runtime().run(h, { input: 'go' });
    for (const name of names) expect(res.outputs[name]).toBe(`v1:go-${name}`);
  });
});
