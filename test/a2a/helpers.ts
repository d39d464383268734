/**
 * Helpers of the A2A server tests: the built CLI serving a folder with --a2a over loopback HTTP, and
 * the official SDK's clients (A2A 1.0, and the 0.3 JSON-RPC transport of its compatibility layer)
 * sending the server's bearer token.
 */
import type { Message, Part, StreamResponse, Task } from '@a2a-js/sdk';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport, LegacyRestTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { type CliProcess, startCli } from '../helpers.js';
import { waitFor } from '../mcp/helpers.js';

/** A hatchery that asks one question, for the input-required tests. */
export const ASK_COLOUR = {
  name: 'ask',
  desc: 'asks a colour',
  nodes: [{ name: 'Pick', type: 'ask', question: 'Which colour?', save_output: 'c' }],
};

/** The token of the servers these tests start. */
export const TOKEN = 'a2a-tok-5b1e7c9d3f';

/** A served folder: the CLI process and the origin it listens on. */
export interface Served {
  cli: CliProcess;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `serve --dir DIR --http 127.0.0.1:0 --a2a` (plus `args`) with the token, and waits until it listens. */
export async function serveA2a(
  dir: string,
  opts: { args?: string[]; env?: Record<string, string>; token?: string | null } = {},
): Promise<Served> {
  const token = opts.token === undefined ? TOKEN : opts.token;
  const cli = startCli(['serve', '--dir', dir, '--http', '127.0.0.1:0', ...(opts.args ?? ['--a2a'])], {
    env: { ...(token ? { HATCHERY_MCP_TOKEN: token } : {}), ...opts.env },
  });
  const url = await waitFor(
    () => {
      if (cli.child.exitCode !== null) throw new Error(`the server exited: ${cli.err()}`);
      return /listening on (http:\S+)/.exec(cli.err())?.[1];
    },
    15_000,
    'the listening line',
  );
  return {
    cli,
    origin: new URL(url).origin,
    stop: async () => {
      cli.child.kill('SIGTERM');
      return cli.exit;
    },
  };
}

/** A fetch that sends `Authorization: Bearer <token>` (none for null). */
export function authFetch(token: string | null = TOKEN): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * An A2A 1.0 client of the agent at `base` (its card at base/.well-known/agent-card.json), over
 * JSON-RPC or, with `rest`, over HTTP+JSON.
 */
export async function v1Client(base: string, token: string | null = TOKEN, rest = false): Promise<Client> {
  const fetchImpl = authFetch(token);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      // Both, so the defaults (which send no token) are replaced; the preference picks the binding.
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [rest ? 'HTTP+JSON' : 'JSONRPC'],
    }),
  );
  return factory.createFromUrl(base);
}

/** An A2A 0.3 JSON-RPC transport of the SDK's compatibility layer, posting to `endpoint`. */
export function legacyTransport(endpoint: string, token: string | null = TOKEN): LegacyJsonRpcTransport {
  return new LegacyJsonRpcTransport({ endpoint, fetchImpl: authFetch(token) });
}

/** An A2A 0.3 HTTP+JSON transport of the SDK's compatibility layer, below `endpoint`. */
export function legacyRestTransport(endpoint: string, token: string | null = TOKEN): LegacyRestTransport {
  return new LegacyRestTransport({ endpoint, fetchImpl: authFetch(token) });
}

/** A user message: `text` as a text part, `data` (named inputs) as a data part. */
export function userMessage(
  opts: {
    text?: string;
    data?: Record<string, unknown>;
    taskId?: string;
    contextId?: string;
    skill?: string;
  } = {},
): Message {
  const parts: Part[] = [];
  if (opts.text !== undefined)
    parts.push({
      content: { $case: 'text', value: opts.text },
      metadata: undefined,
      filename: '',
      mediaType: 'text/plain',
    });
  if (opts.data !== undefined)
    parts.push({
      content: { $case: 'data', value: opts.data },
      metadata: undefined,
      filename: '',
      mediaType: 'application/json',
    });
  return {
    messageId: crypto.randomUUID(),
    contextId: opts.contextId ?? '',
    taskId: opts.taskId ?? '',
    role: Role.ROLE_USER,
    parts,
    metadata: opts.skill ? { skill: opts.skill } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The params of SendMessage / SendMessageStream for `message`. */
export function send(message: Message) {
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

/** The text of a status update's message, or of a task's status message. */
export function statusText(status: Task['status']): string {
  return (status?.message?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('');
}

/** The texts of an artifact's text parts, joined. */
export function artifactText(task: Task): string {
  return task.artifacts
    .flatMap((a) => a.parts)
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('');
}

/** Collects a stream's events until it ends. */
export async function collect(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

/** The state names of a stream's status updates, e.g. ["WORKING", "COMPLETED"]. */
export function states(events: StreamResponse[]): string[] {
  return events.flatMap((e) =>
    e.payload?.$case === 'statusUpdate'
      ? [TaskState[e.payload.value.status!.state].replace('TASK_STATE_', '')]
      : [],
  );
}

/** The texts of a stream's status update messages. */
export function updateTexts(events: StreamResponse[]): string[] {
  return events.flatMap((e) =>
    e.payload?.$case === 'statusUpdate' ? [statusText(e.payload.value.status)] : [],
  );
}
