/**
 * The A2A server inside serveHttp: the SDK's Express handlers (agent card, JSON-RPC, each with the
 * v0.3 compatibility layer) behind the HTTP server's own Host, Origin, token and body-size checks.
 * Imported only with --a2a, so a server without it never loads the SDK or Express.
 *
 * Endpoints: the folder's card at /.well-known/agent-card.json, /a2a/.well-known/agent-card.json
 * and GET /a2a; its JSON-RPC at POST /a2a, its HTTP+JSON (REST) below /a2a/rest. A hatchery's card
 * at /a2a/<name>/.well-known/agent-card.json and GET /a2a/<name>; its JSON-RPC at POST /a2a/<name>,
 * its REST below /a2a/<name>/rest.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import {
  type A2ARequestHandler,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express, { type RequestHandler } from 'express';
import { cancellable } from '../../journal/store.js';
import type { ServerHost } from '../host.js';
import { reply } from '../http-auth.js';
import { unknownName } from '../tool-defs.js';
import { A2A_PATH, agentCard, REST_PATH, servedCard } from './card.js';
import { HatcheryExecutor } from './executor.js';
import { planned } from './plan.js';
import { JournalTaskStore } from './task-store.js';

/** The params of SendMessage and SendMessageStream. */
type SendParams = Parameters<A2ARequestHandler['sendMessage']>[0];

/** What the A2A server needs of the hatchery server: the host of runs, and news of reloads. */
export type A2aHost = ServerHost & { onListChanged(fn: () => void): () => void };

/** The A2A endpoints mounted in the HTTP server. */
export interface A2aMount {
  /** Serves a request to an A2A path (see isA2aPath), already checked for Host, Origin and token. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  /** Stops following reloads. */
  close(): void;
}

/** True for the paths the A2A server answers. */
export function isA2aPath(pathname: string): boolean {
  return pathname === `/${AGENT_CARD_PATH}` || pathname === A2A_PATH || pathname.startsWith(`${A2A_PATH}/`);
}

/**
 * The origin a request reached, which the cards name: its Host header (checked against DNS
 * rebinding before), and the scheme a TLS proxy in front says the client used (`X-Forwarded-Proto`,
 * or `proto=` of `Forwarded`), else http. Only http and https are taken: the value shapes no more
 * than the card this same client reads.
 */
function originOf(req: IncomingMessage): string {
  const forwarded = req.headers.forwarded;
  const proto =
    (typeof forwarded === 'string' ? /(?:^|[;,\s])proto="?([a-z]+)"?/i.exec(forwarded)?.[1] : undefined) ??
    String(req.headers['x-forwarded-proto'] ?? '').split(',')[0];
  const scheme = proto?.trim().toLowerCase() === 'https' ? 'https' : 'http';
  return `${scheme}://${req.headers.host ?? 'localhost'}`;
}

/** Mounts the A2A server on `core`; `secured`: the HTTP server demands its bearer token. */
export function mountA2a(core: A2aHost, { secured }: { secured: boolean }): A2aMount {
  const executor = new HatcheryExecutor(core);
  const tasks = new JournalTaskStore(core, (id) => executor.driving(id));
  // One bus manager for every endpoint: a task started at /a2a/<name> can be cancelled through /a2a.
  const buses = new DefaultExecutionEventBusManager();
  /** The JSON-RPC and REST handlers and the card of each endpoint and origin, until the hatcheries change. */
  const cache = new Map<string, { rpc: RequestHandler; rest: RequestHandler; card: RequestHandler }>();
  const unlisten = core.onListChanged(() => cache.clear());

  /** The handlers of `scope` (a hatchery's name, or undefined: the folder) for `origin`. */
  const endpoint = (scope: string | undefined, origin: string) => {
    const key = `${scope ?? ''}\n${origin}`;
    let e = cache.get(key);
    if (!e) {
      const card = agentCard(core, scope, origin, secured);
      if (!card) return undefined;
      const inner = new DefaultRequestHandler(card, tasks, executor, buses);
      const handler = checked(inner, scope);
      const served = servedCard(card);
      const getCard = async (): Promise<AgentCard> => served;
      e = {
        rpc: jsonRpcHandler({
          requestHandler: handler,
          userBuilder: UserBuilder.noAuthentication,
          legacyCompat: { enabled: true },
        }),
        rest: restHandler({
          requestHandler: handler,
          userBuilder: UserBuilder.noAuthentication,
          legacyCompat: { enabled: true },
        }),
        // No caching: a reload changes the card.
        card: agentCardHandler({
          agentCardProvider: getCard,
          legacyCompat: { enabled: true },
          cache: { maxAge: 0 },
        }),
      };
      cache.set(key, e);
    }
    return e;
  };

  /**
   * The request handler of an endpoint: a message is checked and planned (which hatchery, which
   * inputs, or the answer to a question) before the SDK makes a task of it, so bad input is an
   * A2A error and never a task; a cancel of a task nobody drives here ends its run in the journal.
   */
  const checked = (inner: DefaultRequestHandler, scope: string | undefined): A2ARequestHandler => {
    const host = { core, tasks, executor, scope };
    return new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'sendMessage') {
          return async (params: SendParams, ctx: ServerCallContext) => {
            await planned(host, params, ctx);
            return target.sendMessage(params, ctx);
          };
        }
        if (prop === 'sendMessageStream') {
          return async function* (params: SendParams, ctx: ServerCallContext) {
            await planned(host, params, ctx);
            yield* target.sendMessageStream(params, ctx);
          };
        }
        if (prop === 'cancelTask') {
          return async (params: Parameters<A2ARequestHandler['cancelTask']>[0], ctx: ServerCallContext) => {
            const id = params.id;
            await core.ready();
            const store = core.runtime.store;
            if (store && !buses.getByTaskId(id, ctx) && !executor.driving(id) && (await tasks.load(id))) {
              // Suspended, or from before a restart: nobody runs it here, so the journal ends it now.
              const s = (await store.read(id))?.summary;
              if (s && cancellable(s.status)) await store.cancel(id);
            }
            const task = await target.cancelTask(params, ctx);
            // The SDK keeps the bus of a task that waited for input; a canceled task needs it no more.
            if (!executor.driving(id)) {
              buses.getByTaskId(id, ctx)?.finished();
              buses.cleanupByTaskId(id, ctx);
            }
            return task;
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const serveCard =
    (scope: string | undefined): RequestHandler =>
    (req, res, next) => {
      const e = endpoint(scope, originOf(req));
      if (!e) return notFound(scope!, res);
      // The SDK's card router answers at its own root.
      req.url = '/';
      e.card(req, res, next);
    };
  const serveRpc =
    (scope: string | undefined): RequestHandler =>
    (req, res, next) => {
      // Mounted with use(): /a2a must not take the requests of /a2a/<name>.
      if (req.url !== '/' && req.url !== '') return next();
      const e = endpoint(scope, originOf(req));
      if (!e) return notFound(scope!, res);
      e.rpc(req, res, next);
    };
  const serveRest =
    (scope: string | undefined): RequestHandler =>
    (req, res, next) => {
      const e = endpoint(scope, originOf(req));
      if (!e) return notFound(scope!, res);
      e.rest(req, res, next);
    };
  const notFound = (name: string, res: ServerResponse) =>
    reply(
      res,
      404,
      `${unknownName(
        'hatchery',
        name,
        core.registry.listed().map((e) => e.name),
      )}; the folder's agent is ${A2A_PATH}, each hatchery's ${A2A_PATH}/<name>`,
    );
  app.get([`/${AGENT_CARD_PATH}`, `${A2A_PATH}/${AGENT_CARD_PATH}`, A2A_PATH], serveCard(undefined));
  app.get([`${A2A_PATH}/:name/${AGENT_CARD_PATH}`, `${A2A_PATH}/:name`], (req, res, next) =>
    serveCard(String(req.params.name))(req, res, next),
  );
  app.post(A2A_PATH, (req, res, next) => {
    req.url = '/';
    serveRpc(undefined)(req, res, next);
  });
  app.use(`${A2A_PATH}/:name`, (req, res, next) => {
    if (req.method !== 'POST') return next();
    serveRpc(String(req.params.name))(req, res, next);
  });
  // A hatchery's REST first: /a2a/rest/... is the folder's, /a2a/rest/rest/... a hatchery "rest"'s.
  app.use(`${A2A_PATH}/:name${REST_PATH}`, (req, res, next) =>
    serveRest(String(req.params.name))(req, res, next),
  );
  app.use(`${A2A_PATH}${REST_PATH}`, serveRest(undefined));
  app.use((_req, res) => {
    reply(
      res,
      404,
      `not found: the A2A agent card is /${AGENT_CARD_PATH} (or ${A2A_PATH}/<hatchery>/${AGENT_CARD_PATH}); JSON-RPC is POST ${A2A_PATH} or ${A2A_PATH}/<hatchery>, HTTP+JSON below ${A2A_PATH}${REST_PATH} or ${A2A_PATH}/<hatchery>${REST_PATH}`,
    );
  });

  return {
    async handle(req, res, body) {
      // Read (and capped by --max-body) by the HTTP server: Express's JSON parser sees a read request and skips.
      if (body !== undefined) (req as IncomingMessage & { body?: unknown }).body = body;
      await new Promise<void>((resolve) => {
        res.once('close', resolve);
        app(req as express.Request, res as express.Response, () => resolve());
      });
    },
    close: unlisten,
  };
}
