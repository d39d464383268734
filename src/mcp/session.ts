import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { registerTasksExtension } from './ext-tasks/register.js';
import { genericDefinitions } from './generic/tools.js';
import type { ServerHost } from './host.js';
import { formatBytes, MAX_ERROR_BYTES } from './outbound.js';

/** Media type of the flowchart resources (Mermaid text). */
const MERMAID_MIME = 'text/vnd.mermaid';

/** One MCP session: a low-level SDK server connected to one client. */
export interface Session {
  readonly server: Server;
  /** The transport's session id (HTTP), for per-session log levels. */
  sessionId(): string | undefined;
}

/** The call handling of every session, loaded once (see loadCallHandling). */
let callHandling: Promise<typeof import('./session-calls.js')> | undefined;

/**
 * Loads the tools/call handling: on the first call, or in the background as soon as the first
 * tools/list is answered (the server starts it), so that answering initialize and tools/list loads
 * none of the call path and the first call does not wait for it. A failed import is tried again.
 */
export function loadCallHandling(): Promise<typeof import('./session-calls.js')> {
  callHandling ??= import('./session-calls.js').catch((err: unknown) => {
    callHandling = undefined;
    throw err;
  });
  return callHandling;
}

/** Builds a session: tools, resources and logging, all read from the server's shared registry. */
export function createSession(core: ServerHost): Session {
  const server = new Server(
    { name: 'hatchery-mcp', title: 'hatchery-mcp', version: core.version },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        logging: {},
      },
      instructions: core.instructions(),
      debouncedNotificationMethods: [
        'notifications/tools/list_changed',
        'notifications/resources/list_changed',
      ],
    },
  );

  server.setRequestHandler('tools/list', () => ({
    tools: core.genericTools ? [...core.tools(), ...genericDefinitions()] : core.tools(),
  }));

  server.setRequestHandler('tools/call', async (request, ctx) => {
    // The call path, the runtime and the compiling half of the loader, all after the first answer.
    const [c] = await Promise.all([loadCallHandling(), core.ready()]);
    // A file listed before its load completed (a deferred start) completes it now; one that failed
    // it is withdrawn, and the call gets the file's problems as a broken file's error.
    const name = request.params.name;
    const failure = core.registry.get(name) ? undefined : core.registry.failure(name);
    if (failure) return (await import('./calls.js')).errorResult(core, failure);
    return c.handleCall(core, server, request, ctx);
  });
  registerTasksExtension(server, core);

  server.setRequestHandler('resources/list', () => ({
    resources: core.registry.listed().flatMap((e) => [
      {
        uri: e.uri,
        name: e.name,
        title: `${e.name} (hatchery definition)`,
        description: core.out.desc(e.tool.description ?? ''),
        mimeType: e.mimeType,
      },
      // The flowchart of each hatchery, for clients that draw Mermaid (built when read).
      {
        uri: e.graphUri,
        name: `${e.name} graph`,
        title: `${e.name} (flowchart)`,
        description: `The nodes and routing of ${e.name} as a Mermaid flowchart`,
        mimeType: MERMAID_MIME,
      },
    ]),
  }));

  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));

  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    if (core.outputs.owns(uri)) {
      const text = core.outputs.read(uri);
      if (text === undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          core.out.text(core.outputs.missing(uri), MAX_ERROR_BYTES),
        );
      }
      // Parts were cut to the result limit when stored; redacted already.
      return { contents: [{ uri, mimeType: core.outputs.mimeTypeOf(uri), text }] };
    }
    // A file listed from a deferred start completes its load for its graph or text.
    await core.ready();
    const drawn = core.registry.byUri(uri, 'graphUri');
    if (drawn) {
      // Drawn when read, rarely: its module is loaded then.
      const { hatcheryToMermaid } = await import('../loader/mermaid.js');
      const text = core.redact(hatcheryToMermaid(drawn.hatchery));
      return {
        contents: [{ uri, mimeType: MERMAID_MIME, text: core.out.text(text, core.out.maxResultBytes) }],
      };
    }
    const entry = core.registry.byUri(uri);
    if (!entry)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `no hatchery resource ${core.out.text(uri, 200)}`,
      );
    const bytes = Buffer.byteLength(entry.text);
    if (bytes > core.out.maxResultBytes) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `${entry.name}: the file is ${formatBytes(bytes)}, over the server's limit of ${formatBytes(core.out.maxResultBytes)} per message; read ${entry.file} directly`,
      );
    }
    return { contents: [{ uri: entry.uri, mimeType: entry.mimeType, text: core.redact(entry.text) }] };
  });

  return { server, sessionId: () => server.transport?.sessionId };
}
