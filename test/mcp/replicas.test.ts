/**
 * Two HTTP server processes on one state folder, as replicas behind a load balancer: a run started
 * through one is seen through the other while it runs and after it ends, and is cancelled through
 * the other. The replicas share nothing but the run journal.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { type CliProcess, startCli, tempDir } from '../helpers.js';
import { fakeEnv, hatcheryDir, textOf, waitFor, writeHatchery } from './helpers.js';

/** A promise with its resolve, to hold a fake model reply until the test lets it go. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

/** What the test needs of a client of either era. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/** The two protocol eras: a 2025-11-25 client keeps a session with one replica, a 2026-07-28 one none. */
const ERAS = [
  {
    era: '2025-11-25 (v1 SDK client, sessions)',
    connect: async (url: string): Promise<AnyClient> => {
      const client = new Client({ name: 'replica-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    },
  },
  {
    era: '2026-07-28 (v2 SDK client, stateless)',
    connect: async (url: string): Promise<AnyClient> => {
      const client = new ClientV2(
        { name: 'replica-test', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new StreamableHTTPClientTransportV2(new URL(url)));
      return client;
    },
  },
];

describe.each(ERAS)('two server processes on one state folder, $era', ({ connect: open }) => {
  const { openai, anthropic } = fakeVendors();
  const dir = hatcheryDir();
  const state = tempDir('hatchery-replicas-');
  const servers: CliProcess[] = [];
  const clients: AnyClient[] = [];
  const gates: (() => void)[] = [];

  writeHatchery(dir, 'two-steps.json', {
    name: 'two_steps',
    desc: 'two model steps',
    nodes: [
      { name: 'Draft', usr_prompt: 'draft {{ ctx.input }}', next: 'Polish' },
      { name: 'Polish', usr_prompt: 'polish {{ out.Draft }}' },
    ],
  });

  /** Starts a replica on the shared state folder; resolves with its URL once it listens. */
  async function replica(): Promise<string> {
    const p = startCli(['--dir', dir, '--http', '127.0.0.1:0', '--state', state], {
      env: fakeEnv(openai.baseURL, anthropic.baseURL),
    });
    servers.push(p);
    return waitFor(() => /listening on (http:\S+)/.exec(p.err())?.[1], 15_000, 'the listening line');
  }

  async function connect(url: string): Promise<AnyClient> {
    const client = await open(url);
    clients.push(client);
    return client;
  }

  const call = async (c: AnyClient, name: string, args: Record<string, unknown>) => {
    const r = (await c.callTool({ name, arguments: args })) as {
      structuredContent?: Record<string, unknown>;
      isError?: boolean;
    };
    return { text: textOf(r), data: r.structuredContent ?? {}, isError: r.isError };
  };

  let one: AnyClient;
  let urlTwo: Promise<string>;

  beforeAll(async () => {
    one = await connect(await replica());
  }, 20_000);
  afterAll(async () => {
    for (const g of gates) g();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.exit));
  });

  it('reads a run started through the first through the second, while it runs and after it ends', async () => {
    const held = gate();
    gates.push(held.open);
    openai.enqueue(async () => {
      await held.wait;
      return 'a draft';
    }, 'the polished text');
    const started = await call(one, 'hatchery_start', { name: 'two_steps', input: 'owls' });
    const runId = started.data.run_id as string;
    expect(runId).toMatch(/\S/);
    await waitFor(() => openai.requests.length >= 1, 10_000, 'the first model call');

    // The second replica starts while the run is going: it must not take the run for interrupted.
    urlTwo = replica();
    const two = await connect(await urlTwo);
    const status = await call(two, 'hatchery_status', { run_id: runId });
    expect(status.isError).toBeFalsy();
    expect(status.data).toMatchObject({ run_id: runId, hatchery: 'two_steps', state: 'running' });
    expect(status.data.current_node).toBe('Draft');
    const waiting = await call(two, 'hatchery_result', { run_id: runId, wait_seconds: 0 });
    expect(waiting.data).toMatchObject({
      state: 'running',
      next_step: expect.stringMatching(/hatchery_result again/),
    });

    // hatchery_result through the replica that does not run it waits on the journal, as the owner would.
    const pending = call(two, 'hatchery_result', { run_id: runId, wait_seconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    held.open();
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(result.text).toBe('the polished text');
    const done = await call(two, 'hatchery_status', { run_id: runId });
    expect(done.data).toMatchObject({ state: 'succeeded', steps: 2 });
    expect(done.data.outputs).toEqual({ Draft: 'a draft', Polish: 'the polished text' });
    // And the first replica, which ran it, agrees.
    expect((await call(one, 'hatchery_result', { run_id: runId })).text).toBe('the polished text');
  }, 40_000);

  it('cancels a run of the first through the second: its model call is aborted', async () => {
    const held = gate();
    gates.push(held.open);
    const before = openai.requests.length;
    openai.enqueue(async () => {
      await held.wait;
      return 'never used';
    });
    const started = await call(one, 'hatchery_start', { name: 'two_steps', input: 'bats' });
    const runId = started.data.run_id as string;
    await waitFor(() => openai.requests.length > before, 10_000, 'the model call');
    const two = await connect(await urlTwo);
    const cancel = await call(two, 'hatchery_cancel', { run_id: runId });
    expect(cancel.isError).toBeFalsy();
    expect(cancel.data).toMatchObject({ note: 'cancel requested' });
    // The owner sees the marker, aborts the run and journals it as cancelled.
    const status = await waitFor(
      async () => {
        const s = await call(two, 'hatchery_status', { run_id: runId });
        return s.data.state === 'cancelled' ? s : undefined;
      },
      15_000,
      'the cancelled state through the second replica',
    );
    expect(status.data.state).toBe('cancelled');
    // The owner answers from its memory: an error that names the cancel.
    const owner = await call(one, 'hatchery_result', { run_id: runId });
    expect(owner.isError).toBe(true);
    expect(owner.text).toMatch(/was cancelled/);
    // ... and calls it cancelled too, as the journal does.
    expect((await call(one, 'hatchery_status', { run_id: runId })).data.state).toBe('cancelled');
    const result = await call(two, 'hatchery_result', { run_id: runId });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/cancel/);
    await waitFor(() => openai.requests[before]?.disconnected, 10_000, 'the model call to be aborted');
  }, 40_000);

  it('answers an unknown or hostile run id through either replica as not found', async () => {
    const two = await connect(await urlTwo);
    for (const c of [one, two]) {
      for (const id of ['../../etc/passwd', 'no-such-run', '']) {
        const r = await call(c, 'hatchery_status', { run_id: id });
        expect(r.isError, id).toBe(true);
        expect(r.text).not.toMatch(/root:|ENOENT/);
        const x = await call(c, 'hatchery_cancel', { run_id: id });
        expect(x.isError, id).toBe(true);
      }
    }
  });
});
