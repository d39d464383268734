import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { echoDef, hatcheryDir, inMemory, textOf, writeHatchery } from '../mcp/helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function client() {
  const dir = hatcheryDir();
  writeHatchery(dir, 'hello.json', echoDef('hello', 'hi '));
  const s = await inMemory(dir);
  cleanups.push(s.close);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await s.client.callTool({ name, arguments: args })) as CallToolResult;
    return { isError: r.isError === true, text: textOf(r) };
  };
  return call;
}

describe('MCP calls name the nearest valid name', () => {
  it('an unknown tool: the nearest tool, or the served ones when nothing is near', async () => {
    const call = await client();
    expect(await call('helo', {})).toEqual({
      isError: true,
      text: 'unknown tool "helo"; did you mean "hello"?',
    });
    expect(await call('hatchery_lsit', {})).toEqual({
      isError: true,
      text: 'unknown tool "hatchery_lsit"; did you mean "hatchery_list"?',
    });
    const far = await call('zzzzzz', {});
    expect(far.isError).toBe(true);
    expect(far.text).toMatch(/^unknown tool "zzzzzz"; available: hello, hatchery_list, hatchery_run, /);
  });

  it('hatchery_run and hatchery_start with an unknown hatchery name', async () => {
    const call = await client();
    for (const tool of ['hatchery_run', 'hatchery_start']) {
      expect(await call(tool, { name: 'helo' })).toEqual({
        isError: true,
        text: 'unknown hatchery "helo"; did you mean "hello"?',
      });
    }
    expect(await call('hatchery_run', { name: 'qqqqqq' })).toEqual({
      isError: true,
      text: 'unknown hatchery "qqqqqq"; available: hello',
    });
  });

  it('an unknown run id says so and where run ids come from; a misspelt argument is named', async () => {
    const call = await client();
    for (const tool of ['hatchery_status', 'hatchery_result', 'hatchery_cancel']) {
      expect(await call(tool, { run_id: 'nope' })).toEqual({
        isError: true,
        text: 'unknown run id "nope": no run of this server has it (it never existed, or it finished too long ago and was dropped); use the run_id that hatchery_start returned',
      });
    }
    expect(await call('hatchery_status', { runid: 'x' })).toEqual({
      isError: true,
      text: 'missing argument "run_id"; you passed "runid": did you mean "run_id"?',
    });
    expect(await call('hatchery_status', { run_id: 7 })).toEqual({
      isError: true,
      text: 'argument "run_id" must be a string (text), not the number 7',
    });
  });

  it('a hatchery tool: a wrong-typed argument names the type found; an unknown one the nearest input', async () => {
    const call = await client();
    const typed = await call('hello', { input: 5 });
    expect(typed.isError).toBe(true);
    expect(typed.text).toMatch(/argument "input" of hello must be a string \(text\), not the number 5$/);
    const unknown = await call('hello', { inptu: 'x' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(
      /hello has no argument "inptu" \(did you mean "input"\?\); it accepts: input$/,
    );
    expect((await call('hello', { input: 'you' })).text).toBe('hi you');
  });
});
