/**
 * deploy/compose.yaml (issue 39): PostgreSQL and two replicas of `serve --http --store`. Its shape is
 * checked as Compose reads it (a healthy database before the replicas, one store URL, two replica
 * ids, the token and passwords from the environment, the folder read-only, the Dockerfile's
 * entrypoint); then each replica's `command` runs without Docker, exactly as written but for the
 * store URL (the test database), the address (a free loopback port) and the folder (a copy of
 * deploy/hatchery), and a run started through one replica is seen, waited for and cancelled
 * through the other, over HTTP with the bearer token.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type CliProcess, REPO_ROOT, runCli, startCli, tempDir } from '../helpers.js';
import { textOf, waitFor } from '../mcp/helpers.js';
import { testDatabase } from './database.js';
import { freePort } from './processes.js';

const DEPLOY = path.join(REPO_ROOT, 'deploy');
const COMPOSE_FILE = path.join(DEPLOY, 'compose.yaml');

/** The parts of a Compose service this test reads. */
interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  hostname?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: ({ type: string; source: string; target: string; read_only?: boolean } | string)[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const compose = parse(readFileSync(COMPOSE_FILE, 'utf8')) as { services: Record<string, Service> };
const services = compose.services;
/** The services that run hatchery-mcp's server: the replicas. */
const replicas = Object.entries(services).filter(([, s]) => s.command?.[0] === 'serve');

/** The value following `flag` in a command (undefined when the flag is absent). */
function flag(command: readonly string[], name: string): string | undefined {
  const i = command.indexOf(name);
  return i < 0 ? undefined : command[i + 1];
}

/** Compose's interpolation of `${NAME}`, `${NAME:-default}` and `${NAME:?error}` from `vars`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v) return v;
    if (op === '?') throw new Error(`required variable ${name} is missing a value: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

/** A variable Compose demands from the environment: `${NAME:?set NAME}`. */
const required = (name: string) => `\${${name}:?set ${name}}`;

/** Environment variable names whose values are secrets. */
const SECRET = /(TOKEN|PASSWORD|PASSWD|SECRET|KEY|CREDENTIALS?)$/i;

describe('deploy/compose.yaml', () => {
  it('runs PostgreSQL with a healthcheck, and two replicas that wait for it to be healthy', () => {
    const db = services.postgres;
    expect(db?.image).toMatch(/^postgres:\d+/);
    expect(db?.healthcheck?.test.join(' ')).toMatch(/pg_isready -h 127\.0\.0\.1 -U hatchery -d hatchery/);
    expect(replicas.map(([name]) => name)).toEqual(['web-1', 'web-2']);
    for (const [name, s] of replicas) {
      expect(s.depends_on, name).toEqual({ postgres: { condition: 'service_healthy' } });
    }
  });

  it('gives the replicas distinct ids and ports, one store URL at the postgres service, and one folder', () => {
    const commands = replicas.map(([, s]) => s.command!);
    expect(commands.map((c) => flag(c, '--replica-id'))).toEqual(['web-1', 'web-2']);
    const stores = new Set(commands.map((c) => flag(c, '--store')));
    expect(stores.size).toBe(1);
    const store = new URL([...stores][0]!);
    expect(store.protocol).toBe('postgres:');
    expect(store.hostname).toBe('postgres');
    expect(services[store.hostname]).toBeDefined();
    expect(store.username).toBe(services.postgres!.environment!.POSTGRES_USER);
    expect(store.pathname).toBe(`/${services.postgres!.environment!.POSTGRES_DB}`);
    // No password in the command: the driver reads it from PGPASSWORD.
    expect(store.password).toBe('');
    const addresses = commands.map((c) => flag(c, '--http')!);
    expect(addresses.every((a) => a.startsWith('0.0.0.0:'))).toBe(true);
    const ports = addresses.map((a) => a.split(':')[1]);
    expect(new Set(ports).size).toBe(2);
    // Each replica publishes its own port, on this machine's loopback only.
    replicas.forEach(([name, s], i) => {
      expect(s.ports, name).toEqual([`127.0.0.1:${ports[i]}:${ports[i]}`]);
      // Its host name is its service name: the Host a proxy on the compose network sends is accepted.
      expect(s.hostname).toBe(name);
    });
    expect(new Set(commands.map((c) => flag(c, '--dir'))).size).toBe(1);
  });

  it('takes the token and the passwords from the environment: no secret is written in it', () => {
    const text = readFileSync(COMPOSE_FILE, 'utf8');
    for (const [name, s] of replicas) {
      expect(s.command, name).not.toContain('--token');
      expect(s.environment?.HATCHERY_MCP_TOKEN, name).toBe(required('HATCHERY_TOKEN'));
      expect(s.environment?.PGPASSWORD, name).toBe(required('POSTGRES_PASSWORD'));
    }
    expect(services.postgres!.environment!.POSTGRES_PASSWORD).toBe(required('POSTGRES_PASSWORD'));
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (SECRET.test(key)) expect(value, `${name}: ${key}`).toMatch(/^\$\{\w+:\?[^}]+\}$/);
      }
    }
    expect(() => interpolate(text, {})).toThrow('required variable');
  });

  it('mounts the served folder read-only, and that folder holds valid hatcheries', async () => {
    for (const [name, s] of replicas) {
      const dir = flag(s.command!, '--dir');
      const mounts = (s.volumes ?? []).filter((v) =>
        typeof v === 'string' ? v.split(':')[1] === dir : v.target === dir,
      );
      expect(mounts, name).toHaveLength(1);
      const m = mounts[0]!;
      if (typeof m === 'string') expect(m.split(':')[2], name).toBe('ro');
      else expect(m, name).toMatchObject({ type: 'bind', read_only: true });
      const source = path.resolve(DEPLOY, typeof m === 'string' ? m.split(':')[0]! : m.source);
      expect(source).toBe(path.join(DEPLOY, 'hatchery'));
    }
    const valid = await runCli(['validate', path.join(DEPLOY, 'hatchery')]);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
  });

  it('builds both replicas from deploy/Dockerfile: node:20-slim, npm ci, npm run build, `node dist/cli.js`', () => {
    for (const [name, s] of replicas) {
      expect(s.build, name).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
      expect(path.resolve(DEPLOY, s.build!.context, s.build!.dockerfile)).toBe(
        path.join(DEPLOY, 'Dockerfile'),
      );
    }
    expect(new Set(replicas.map(([, s]) => s.image)).size).toBe(1);
    const lines = readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    const from = lines.filter((l) => l.startsWith('FROM '));
    expect(from.every((l) => /^FROM node:20-slim\b/.test(l))).toBe(true);
    expect(lines).toContain('RUN npm ci');
    expect(lines).toContain('RUN npm run build');
    const entry = lines.filter((l) => l.startsWith('ENTRYPOINT '));
    expect(entry).toHaveLength(1);
    expect(JSON.parse(entry[0]!.slice('ENTRYPOINT '.length))).toEqual(['node', 'dist/cli.js']);
    // Named files only (no `COPY . .`, which would take a .env or the machine's node_modules), and no
    // secret set at build time.
    for (const l of lines.filter((l) => l.startsWith('COPY '))) expect(l).not.toMatch(/^COPY \.\s/);
    for (const l of lines.filter((l) => /^(ENV|ARG) /.test(l))) expect(l).not.toMatch(SECRET);
  });

  it.skipIf(spawnSync('docker', ['compose', 'version']).status !== 0)(
    'is accepted by `docker compose config`',
    () => {
      const env = { ...process.env, HATCHERY_TOKEN: 'token-0123456789', POSTGRES_PASSWORD: 'pw-0123456789' };
      const ok = spawnSync('docker', ['compose', '-f', COMPOSE_FILE, 'config'], { env, encoding: 'utf8' });
      expect(ok.status, ok.stderr).toBe(0);
      const { HATCHERY_TOKEN: _, ...noToken } = env;
      const refused = spawnSync('docker', ['compose', '-f', COMPOSE_FILE, 'config'], {
        env: noToken,
        encoding: 'utf8',
      });
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain('set HATCHERY_TOKEN');
    },
  );
});

describe("deploy/compose.yaml's replica commands, without Docker", () => {
  const TOKEN = 'compose-test-token-0123456789';
  const servers: CliProcess[] = [];
  const closers: (() => Promise<void>)[] = [];
  /** The test database's URL, with its password (for the CLI's `runs` commands). */
  let database: string;
  /** The MCP endpoint of each replica, in compose order. */
  const urls: string[] = [];

  beforeAll(async () => {
    // As in compose.yaml: a user of its own owns the database, and its password is a random one.
    const admin = await testDatabase('compose');
    const user = `hatchery_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(16).toString('hex');
    const name = new URL(admin).pathname.slice(1);
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
      await c.query(`ALTER DATABASE ${name} OWNER TO ${user}`);
    } finally {
      await c.end();
    }
    // The command's URL names no password, as in compose.yaml: PGPASSWORD gives it.
    const store = new URL(admin);
    store.username = user;
    store.password = '';
    database = Object.assign(new URL(store), { password }).toString();
    const vars = { HATCHERY_TOKEN: TOKEN, POSTGRES_PASSWORD: password };
    const folder = tempDir('hatchery-compose-');
    cpSync(path.join(DEPLOY, 'hatchery'), folder, { recursive: true });
    const cwd = tempDir('hatchery-compose-cwd-');
    for (const [, s] of replicas) {
      const port = await freePort();
      const local: Record<string, string> = {
        '--store': store.toString(),
        '--http': `127.0.0.1:${port}`,
        '--dir': folder,
      };
      const command = s.command!;
      const args = command.map((arg, i) => local[command[i - 1]!] ?? arg);
      expect(args.filter((a, i) => a !== command[i])).toHaveLength(3);
      const env = Object.fromEntries(
        Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v, vars)]),
      );
      const server = startCli(args, { env, cwd });
      servers.push(server);
      let ended = false;
      void server.exit.then(() => {
        ended = true;
      });
      urls.push(
        await waitFor(
          () => {
            if (ended) throw new Error(`the replica exited: ${server.err()}`);
            return /listening on (http:\S+)/.exec(server.err())?.[1];
          },
          20_000,
          'the listening line',
        ),
      );
    }
  }, 40_000);

  afterAll(async () => {
    await Promise.all(closers.map((c) => c().catch(() => undefined)));
    for (const s of servers) s.child.kill('SIGTERM');
    const codes = await Promise.all(servers.map((s) => s.exit));
    expect(codes).toEqual(servers.map(() => 0));
  });

  const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };

  /** A 2025-11-25 client: a session with the replica at `url`. */
  async function sessionClient(
    url: string,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: auth });
    const client = new Client({ name: 'compose-test', version: '1.0.0' });
    await client.connect(transport);
    closers.push(() => client.close());
    return { client, transport };
  }

  /** A 2026-07-28 client: stateless, every request stands alone. */
  async function statelessClient(url: string): Promise<ClientV2> {
    const client = new ClientV2(
      { name: 'compose-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransportV2(new URL(url), { requestInit: auth }));
    closers.push(() => client.close());
    return client;
  }

  type AnyClient = Pick<Client, 'callTool'> | Pick<ClientV2, 'callTool'>;
  const call = async (c: AnyClient, name: string, args: Record<string, unknown>) => {
    const r = (await c.callTool({ name, arguments: args })) as {
      structuredContent?: Record<string, unknown>;
      isError?: boolean;
    };
    return { text: textOf(r), data: r.structuredContent ?? {}, isError: r.isError };
  };

  it('refuses a request without the token', async () => {
    for (const url of urls) {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(r.status).toBe(401);
    }
  });

  it('runs a hatchery through web-1 that web-2 and `runs list` see in the database', async () => {
    const { client: one } = await sessionClient(urls[0]!);
    const greeted = await call(one, 'greet', { input: 'compose' });
    expect(greeted.isError).toBeFalsy();
    expect(greeted.text).toBe('Hello, compose!');
    const runId = String(greeted.data.run_id);
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);

    const { client: two } = await sessionClient(urls[1]!);
    const status = await call(two, 'hatchery_status', { run_id: runId });
    expect(status.isError, status.text).toBeFalsy();
    expect(status.data).toMatchObject({ run_id: runId, hatchery: 'greet', state: 'succeeded' });
    expect((await call(two, 'hatchery_result', { run_id: runId })).text).toBe('Hello, compose!');
    // hatchery_runs lists a session only the runs it started (no --list-all-runs in compose.yaml).
    const listed = await call(two, 'hatchery_runs', {});
    expect(listed.data.runs).toEqual([]);

    const list = await runCli(['runs', 'list', '--json'], { env: { HATCHERY_STORE: database } });
    expect(list.code, list.stderr).toBe(0);
    const runs = JSON.parse(list.stdout) as { id: string; hatchery: string; status: string }[];
    expect(runs).toContainEqual(
      expect.objectContaining({ id: runId, hatchery: 'greet', status: 'succeeded' }),
    );
  });

  it('serves a 2026-07-28 client through either replica: a run started on web-2 is cancelled on web-1', async () => {
    const one = await statelessClient(urls[0]!);
    const two = await statelessClient(urls[1]!);
    const started = await call(two, 'hatchery_start', { name: 'wait', input: '30' });
    expect(started.isError, started.text).toBeFalsy();
    const runId = String(started.data.run_id);
    await waitFor(
      async () => (await call(one, 'hatchery_status', { run_id: runId })).data.current_node === 'Sleep',
      10_000,
      'the run at its Sleep node, seen through web-1',
    );
    const cancel = await call(one, 'hatchery_cancel', { run_id: runId });
    expect(cancel.isError, cancel.text).toBeFalsy();
    const result = await call(one, 'hatchery_result', { run_id: runId, wait_seconds: 10 });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/cancel/);
    expect((await call(two, 'hatchery_status', { run_id: runId })).data.state).toBe('cancelled');
    // Stateless requests have no session: hatchery_runs lists them no run, their own included.
    expect((await call(two, 'hatchery_runs', {})).data.runs).toEqual([]);
  });

  it('keeps a 2025-11-25 session on the replica that opened it', async () => {
    const { transport } = await sessionClient(urls[0]!);
    const sessionId = transport.sessionId;
    expect(sessionId).toBeTruthy();
    const elsewhere = await fetch(urls[1]!, {
      method: 'POST',
      headers: {
        ...auth.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId!,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(elsewhere.status).toBe(404);
  });
});
