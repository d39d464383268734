import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hatcheryArgs } from '../../src/mcp/tool-defs.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { problems, tempDir } from '../helpers.js';
import { hatcheryDir, inMemory, textOf, writeHatchery } from '../mcp/helpers.js';
import { cli } from './loader-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A hatchery with one declared input that echoes its input and that input. */
const markDef = {
  name: 'mark',
  desc: 'adds a mark',
  inputs: { mark: 'Punctuation to add' },
  nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: '{{ ctx.input }}{{ ctx.mark }}' } }],
};

describe('declared inputs: no prototype names, no undeclared names', () => {
  const markFile = () => writeHatchery(tempDir(), 'mark.json', markDef);

  it('run --set of the declared input works', async () => {
    const ok = await cli(['run', markFile(), '--set', 'mark=!'], { stdin: 'hi' });
    expect(ok.stdout).toBe('hi!\n');
  });

  // Separate CLI processes that only wait for each other's CPU: run together.
  it.concurrent.each(['constructor', 'toString', '__proto__'])(
    'run --set %s=x is refused, naming the declared inputs',
    async (name) => {
      const r = await cli(['run', markFile(), '--set', 'mark=!', '--set', `${name}=x`], { stdin: 'hi' });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`"${name}" is not a declared input of mark; declared inputs: mark`);
    },
  );

  it('the same names as MCP tool arguments are refused (isError)', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'mark.json', markDef);
    const s = await inMemory(dir);
    cleanups.push(s.close);
    const call = (args: Record<string, unknown>) => s.client.callTool({ name: 'mark', arguments: args });
    expect(textOf(await call({ input: 'hi', mark: '!' }))).toBe('hi!');
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const r = await call({ input: 'hi', mark: '!', [name]: 'x' });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(`mark has no argument "${name}"; it accepts: input, mark`);
    }
    // A JSON "__proto__" argument is dropped by the SDK's request parsing: it never reaches the run.
    const proto = await call(JSON.parse('{"input": "hi", "mark": "!", "__proto__": {"mark": "?"}}'));
    expect(textOf(proto)).toBe('hi!');
    // Inside hatchery_run's "inputs" object the key survives the SDK: it is refused as unknown, and
    // an object given as its value is refused as not text before the name is looked at.
    const refusals = [
      ['{"mark": "!", "__proto__": "x"}', 'mark has no argument "__proto__"; it accepts: input, mark'],
      [
        '{"mark": "!", "__proto__": {"mark": "?"}}',
        '"inputs[1].value" must be a string (text), not an object',
      ],
    ];
    for (const [inputs, message] of refusals) {
      const run = await s.client.callTool({
        name: 'hatchery_run',
        arguments: { name: 'mark', input: 'hi', inputs: JSON.parse(inputs!) },
      });
      expect(run.isError).toBe(true);
      expect(textOf(run)).toContain(message);
    }
    // Should a parser turn it into the arguments' prototype instead, the call is refused.
    const h = s.core.registry.get('mark')!.hatchery;
    const inherited = Object.assign(Object.create({ mark: '?' }), { input: 'hi' });
    expect(() => hatcheryArgs(h, inherited)).toThrow(
      'mark has no argument "__proto__"; it accepts: input, mark',
    );
    expect(Object.getPrototypeOf(hatcheryArgs(h, { input: 'hi', mark: '!' }).vars)).toBe(null);
  });

  it('a file declaring a reserved input name is invalid, naming the input and why', async () => {
    const text = JSON.stringify({ ...markDef, inputs: { mark: 'm' } }).replace(
      '"mark":"m"',
      '"mark":"m","__proto__":"p","constructor":"c","fread":"f"',
    );
    const dir = tempDir();
    const file = path.join(dir, 'bad.json');
    writeHatchery(dir, 'bad.json', text);
    const r = await cli(['validate', file]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `${file}: inputs/__proto__ (line 1, column 58): "__proto__" is reserved: it names part of every JavaScript object`,
    );
    expect(r.stdout).toContain(`${file}: inputs/constructor (line 1, column 74): "constructor" is reserved:`);
    expect(r.stdout).toContain(
      `${file}: inputs/fread (line 1, column 92): "fread" is reserved: it is the template function {{ fread(path) }}`,
    );
  });

  it('files entries and save_output names are checked the same way', () => {
    const def = {
      name: 'x',
      desc: 'd',
      inputs: { topic: 't' },
      files: { toString: 'a.txt', topic: 'b.txt', input: 'c.txt' },
      nodes: [{ type: 'tool', tool_name: 'echo', tool_args: { text: 'x' }, save_output: 'constructor' }],
    };
    expect(problems(def)).toEqual([
      'files/toString: "toString" is reserved: it names part of every JavaScript object (its prototype), and a variable with this name could change how ctx behaves; give the file variable another name',
      'files/topic: "topic" is also a declared input; the file would overwrite it, so give one of them another name',
      'files/input: "input" is the run\'s own input ({{ ctx.input }}); give the file variable another name',
      'nodes/0/save_output: "constructor" is reserved: it names part of every JavaScript object (its prototype), and a variable with this name could change how ctx behaves; save the output under another name',
    ]);
  });

  it('the runtime refuses inherited names passed as vars by code', async () => {
    const dir = tempDir();
    writeHatchery(dir, 'mark.json', markDef);
    const { loadHatchery } = await import('../../src/loader/load.js');
    const h = await loadHatchery(path.join(dir, 'mark.json'));
    const rt = new Runtime({ env: {} });
    expect(Object.getPrototypeOf(h.inputs)).toBe(null);
    await expect(rt.run(h, { input: 'a', vars: { mark: '!', valueOf: 'x' } })).rejects.toThrow(
      '"valueOf" is not a declared input of mark; declared inputs: mark',
    );
  });
});
