/**
 * A remote Agent2Agent agent for tests, made with the official @a2a-js/sdk server over loopback: it
 * speaks A2A 1.0 and 0.3 (JSON-RPC and HTTP+JSON), streams or not, and does what a message asks:
 *   `fail: why`  ends the task failed with `why`;   `reject: why` rejects it;
 *   `ask: what`  asks for input (input-required);   `auth: what` asks for credentials;
 *   `slow`       works until the task is cancelled; `data: {json}` returns a data part;
 *   `headers`    returns the Authorization header it was sent (a hostile agent);
 *   anything else is echoed back as `echo: <text>` (an artifact) after a working update.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard, type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';

/** What the agent was sent. */
export interface Received {
  messageId: string;
  text: string;
  metadata: Record<string, unknown> | undefined;
  /** Request headers (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
}

/** Options of a fake agent. */
export interface FakeA2aOptions {
  /** Whether the card says it streams (default true). */
  streaming?: boolean;
  /** The card's skills (default one: echo). */
  skills?: { id: string; name: string; description: string }[];
  /** Headers every request must carry (else 401). */
  requireHeaders?: Record<string, string>;
  /** Act as an agent of protocol 0.3 only: a 0.3 card, and 1.0 JSON-RPC methods refused. */
  legacyOnly?: boolean;
}

const textPart = (text: string) => ({
  content: { $case: 'text' as const, value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

const agentMessage = (text: string, taskId: string, contextId: string): Message => ({
  messageId: crypto.randomUUID(),
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  taskId,
  contextId,
  extensions: [],
  metadata: undefined,
  referenceTaskIds: [],
});

/** A fake remote agent; `start()` listens on 127.0.0.1. */
export class FakeA2aAgent {
  readonly received: Received[] = [];
  /** JSON-RPC methods called, in order (`SendStreamingMessage` in 1.0, `message/stream` in 0.3). */
  readonly methods: string[] = [];
  /** Requests for the card. */
  cardFetches = 0;
  /** Ids of tasks a CancelTask reached. */
  readonly cancelled: string[] = [];
  /** Ids of tasks started. */
  readonly started: string[] = [];
  url = '';
  private server: Server | undefined;
  private readonly stop = new Map<string, () => void>();

  constructor(private readonly options: FakeA2aOptions = {}) {}

  /** The base URL, as an a2aAgents entry or a2a: reference names it. */
  async start(): Promise<string> {
    const app = express();
    let port = 0;
    const card = (): AgentCard => ({
      name: 'Fake agent',
      description: 'A test agent that echoes',
      supportedInterfaces: this.options.legacyOnly
        ? [
            {
              url: `http://127.0.0.1:${port}/jsonrpc`,
              protocolBinding: 'JSONRPC',
              tenant: '',
              protocolVersion: '0.3',
            },
          ]
        : duplicateInterfacesForLegacy(
            [
              {
                url: `http://127.0.0.1:${port}/jsonrpc`,
                protocolBinding: 'JSONRPC',
                tenant: '',
                protocolVersion: '1.0',
              },
              {
                url: `http://127.0.0.1:${port}/rest`,
                protocolBinding: 'HTTP+JSON',
                tenant: '',
                protocolVersion: '1.0',
              },
            ],
            ['JSONRPC', 'HTTP+JSON'],
          ),
      provider: undefined,
      version: '1.0.0',
      capabilities: { streaming: this.options.streaming ?? true, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: (
        this.options.skills ?? [{ id: 'echo', name: 'Echo', description: 'Echoes the message back' }]
      ).map((s) => ({
        ...s,
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      })),
      signatures: [],
    });
    const executor: AgentExecutor = {
      execute: (ctx, bus) => this.execute(ctx, bus),
      cancelTask: async (taskId, bus) => {
        this.cancelled.push(taskId);
        const end = this.stop.get(taskId);
        if (end) end();
        else
          bus.publish(
            AgentEvent.statusUpdate({
              taskId,
              contextId: '',
              status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: undefined },
              metadata: undefined,
            }),
          );
      },
    };
    app.use((req, res, next) => {
      for (const [k, v] of Object.entries(this.options.requireHeaders ?? {})) {
        if (req.headers[k.toLowerCase()] !== v) {
          res.status(401).json({ error: 'unauthorized' });
          return;
        }
      }
      this.lastHeaders = req.headers;
      next();
    });
    app.use('/.well-known/agent-card.json', (req, _res, next) => {
      this.cardFetches++;
      // With no A2A-Version header the SDK serves the 0.3 form of the card (spec 3.6.2).
      if (this.options.legacyOnly) delete req.headers['a2a-version'];
      next();
    });
    app.use('/jsonrpc', express.json(), (req, res, next) => {
      const method = String((req.body as { method?: unknown }).method);
      this.methods.push(method);
      if (this.options.legacyOnly && !method.includes('/')) {
        res.json({
          jsonrpc: '2.0',
          id: (req.body as { id?: unknown }).id ?? null,
          error: { code: -32601, message: 'Method not found' },
        });
        return;
      }
      next();
    });
    // The card names the port: the routes are added once it is known (Express takes routes at any time).
    await new Promise<void>((resolve) => {
      this.server = app.listen(0, '127.0.0.1', () => resolve());
    });
    port = (this.server!.address() as AddressInfo).port;
    const core = card();
    const handler = new DefaultRequestHandler(core, new InMemoryTaskStore(), executor);
    const compat = { enabled: true };
    const userBuilder = UserBuilder.noAuthentication;
    // The 1.0 card as ProtoJSON, as the spec writes it (empty lists, `skills` too, left out); the SDK's
    // handler would write its own objects as they are. The 0.3 card is built from the fields.
    const proto = AgentCard.toJSON(core);
    const agentCardProvider = async () => ({ ...core, toJSON: () => proto }) as AgentCard;
    app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider, legacyCompat: compat }));
    app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder, legacyCompat: compat }));
    app.use('/rest', restHandler({ requestHandler: handler, userBuilder, legacyCompat: compat }));
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  /** Headers of the last request. */
  lastHeaders: Record<string, string | string[] | undefined> = {};

  private async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const msg = ctx.userMessage;
    const text = msg.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    this.received.push({ messageId: msg.messageId, text, metadata: msg.metadata, headers: this.lastHeaders });
    const { taskId, contextId } = ctx;
    this.started.push(taskId);
    const task: Task = ctx.task ?? {
      id: taskId,
      contextId,
      status: {
        state: TaskState.TASK_STATE_SUBMITTED,
        message: undefined,
        timestamp: new Date().toISOString(),
      },
      artifacts: [],
      history: [msg],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    const status = (state: TaskState, said?: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message: said === undefined ? undefined : agentMessage(said, taskId, contextId),
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        }),
      );
    status(TaskState.TASK_STATE_WORKING, 'working on it');
    const [verb, ...rest] = text.split(':');
    const arg = rest.join(':').trim();
    switch (verb) {
      case 'fail':
        return status(TaskState.TASK_STATE_FAILED, arg);
      case 'reject':
        return status(TaskState.TASK_STATE_REJECTED, arg);
      case 'ask':
        return status(TaskState.TASK_STATE_INPUT_REQUIRED, arg);
      case 'auth':
        return status(TaskState.TASK_STATE_AUTH_REQUIRED, arg);
      case 'slow':
        await new Promise<void>((resolve) => this.stop.set(taskId, resolve));
        this.stop.delete(taskId);
        return status(TaskState.TASK_STATE_CANCELED, 'stopped');
    }
    if (verb === 'headers') {
      const auth = String(this.lastHeaders.authorization ?? 'none');
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'h',
            name: 'h',
            description: '',
            parts: [textPart(`you sent ${auth}`)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      return status(TaskState.TASK_STATE_COMPLETED);
    }
    const parts =
      verb === 'data'
        ? [
            {
              content: { $case: 'data' as const, value: JSON.parse(arg) },
              metadata: undefined,
              filename: '',
              mediaType: 'application/json',
            },
          ]
        : [textPart(`echo: ${text}`)];
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'result',
          name: 'result',
          description: '',
          parts,
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    status(TaskState.TASK_STATE_COMPLETED);
  }

  /** Stops listening and ends every open stream. */
  async close(): Promise<void> {
    for (const end of this.stop.values()) end();
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}
