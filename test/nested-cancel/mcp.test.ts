/**
 * Issue 9 over MCP: the built CLI serves the cases of helpers.ts over stdio (one server for the
 * file) and a real SDK client calls them; the nested scripts never write after the call failed or
 * was cancelled. Spawned agents are only tested in process: a tool call's timeout (what ends a
 * spawn_agent call there) has no command-line flag.
 */
import { existsSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hatcheryDir, spawnCli, textOf } from '../mcp/helpers.js';
import { appears, expectNoLateWrite, marker, writeCases } from './helpers.js';

let client: Client;
let close: () => Promise<void>;

beforeAll(async () => {
  const dir = hatcheryDir();
  writeCases(dir);
  ({ client, close } = await spawnCli(dir));
});
afterAll(() => close());

/** Calls the tool of case `name` with the marker as input; the result text and when it came. */
async function call(name: string, input: string) {
  const res = await client.callTool({ name, arguments: { input } });
  return { isError: res.isError === true, text: textOf(res), at: Date.now() };
}

describe.concurrent('nested work ends with the tool call that started it (served CLI over stdio)', () => {
  it('lets the nested script write its marker when nothing stops it (the control)', async () => {
    const m = marker();
    const res = await call('sub', m);
    expect(res.isError).toBe(false);
    expect(existsSync(m)).toBe(true);
  });

  it('ends a hatch: sub-run when the baneling call times out', async () => {
    const m = marker();
    const res = await call('timeout', m);
    expect(res.isError).toBe(true);
    expect(res.text).toContain('tool "sub" timed out after 200 ms');
    await expectNoLateWrite(m, res.at);
  });

  it('ends a hatch: sub-run when a parallel sibling fails', async () => {
    const m = marker();
    const res = await call('sibling', m);
    expect(existsSync(`${m}.started`)).toBe(true);
    expect(res.isError).toBe(true);
    expect(res.text).toMatch(/branch "Fail" failed: .*exited with code 3/);
    await expectNoLateWrite(m, res.at);
  });

  it('ends a node: tool run when the baneling call times out', async () => {
    const m = marker();
    const res = await call('nodetool', m);
    expect(res.isError).toBe(true);
    expect(res.text).toContain('tool "Slow" timed out after 200 ms');
    await expectNoLateWrite(m, res.at);
  });

  it('ends a hatch: sub-run when the client cancels the call', async () => {
    const m = marker();
    const ctrl = new AbortController();
    const pending = client
      .callTool({ name: 'cancel', arguments: { input: m } }, undefined, { signal: ctrl.signal })
      .then(() => undefined)
      .catch((e: unknown) => e);
    await appears(`${m}.started`);
    ctrl.abort('the test cancels');
    // The SDK sends notifications/cancelled and rejects the call with the abort's reason.
    expect(String(await pending)).toContain('the test cancels');
    await expectNoLateWrite(m, Date.now());
  });
});
