import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { linkedController } from '../core/cancel.js';
import { formatError, HatcheryError } from '../core/errors.js';
import { hatcheryToMermaid } from '../loader/mermaid.js';
import { createSamplingProvider } from '../providers/sampling.js';
import type { Provider } from '../providers/types.js';
import { type CallEnv, errorResult, runHatcheryCall, textResult } from './calls.js';
import { canElicitForm, completeInputs, type ElicitFn } from './elicit.js';
import { resumeRun } from './ext-tasks/runner.js';
import { callGenericTool, GENERIC_TOOLS, isGenericTool } from './generic-tools.js';
import type { ResumeAttempt, ServerHost } from './host.js';
import { formatBytes, MAX_ERROR_BYTES } from './outbound.js';
import type { RegistryEntry } from './registry.js';
import type { BackgroundRun } from './runs.js';
import { MAX_TASK_TTL_MS } from './tasks.js';
import { hatcheryArgs, unknownName } from './tool-defs.js';

/** Media type of the flowchart resources (Mermaid text). */
const MERMAID_MIME = 'text/vnd.mermaid';

/** How long the user gets to answer an elicitation form, in milliseconds. */
const ELICIT_TIMEOUT_MS = 600_000;

/** One MCP session: a low-level SDK server connected to one client. */
export interface Session {
  readonly server: Server;
  /** The transport's session id (HTTP), for per-session log levels. */
  sessionId(): string | undefined;
}

/** The client's model as a provider, when the client declared sampling; requests go with `related`. */
function samplingFor(server: Server, related: RequestId | undefined): Provider | undefined {
  const caps = server.getClientCapabilities();
  if (!caps?.sampling) return undefined;
  return createSamplingProvider({
    supportsTools: caps.sampling.tools !== undefined,
    createMessage: (params, o) =>
      server.createMessage(params, { signal: o.signal, timeout: o.timeout, relatedRequestId: related }),
  });
}

function elicitFor(core: ServerHost, server: Server, related: RequestId | undefined): ElicitFn | undefined {
  if (!canElicitForm(server.getClientCapabilities())) return undefined;
  return (params, signal) => {
    // The form's texts are the file's input prompts: redacted and capped like any description.
    const props: typeof params.requestedSchema.properties = {};
    for (const [k, p] of Object.entries(params.requestedSchema.properties)) {
      props[k] =
        'description' in p && p.description ? { ...p, description: core.out.desc(p.description) } : p;
    }
    const safe = {
      ...params,
      message: core.out.desc(params.message),
      requestedSchema: { ...params.requestedSchema, properties: props },
    };
    return server.elicitInput(safe, { signal, timeout: ELICIT_TIMEOUT_MS, relatedRequestId: related });
  };
}

/**
 * Starts a hatchery run in the background (hatchery_start, task-augmented calls): arguments are
 * checked and missing inputs asked for while the request is still open; then the run goes on its
 * own, cancelled only by hatchery_cancel, tasks/cancel or shutdown.
 */
async function startBackground(
  core: ServerHost,
  server: Server,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  requestSignal: AbortSignal,
  related: RequestId,
): Promise<BackgroundRun> {
  const h = entry.hatchery;
  const { input, vars } = hatcheryArgs(h, args);
  const full = await completeInputs(h, vars, elicitFor(core, server, related), requestSignal);
  const runArgs: Record<string, unknown> = input === undefined ? { ...full } : { ...full, input };
  const { controller, unlink } = linkedController(core.signal);
  // No related request: the one that started the run is answered before the run needs the client.
  const sampling = samplingFor(server, undefined);
  const run = core.runs.start({ hatchery: h.name, file: h.file }, controller, (signal, onEvent, runId) =>
    runHatcheryCall(core, entry, runArgs, { signal, onEvent, sampling, runId, source: 'background' }),
  );
  run.done.then(unlink, unlink);
  return run;
}

/** Resumes a journaled run in the background under its own id (see resumeRun). */
export function resumeBackground(
  core: ServerHost,
  id: string,
  attempt: ResumeAttempt,
  meta: { hatchery: string; file: string; source?: string },
  sampling: Provider | undefined,
): BackgroundRun {
  return resumeRun(core, id, attempt, meta, sampling);
}

/** Answers a task-augmented call: creates the task, runs in the background, stores the result. */
async function startTask(
  core: ServerHost,
  server: Server,
  entry: RegistryEntry,
  args: Record<string, unknown> | undefined,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
): Promise<CreateTaskResult> {
  // tasks/cancel marks the task cancelled before the run ends; storing a result then fails, on purpose.
  const store = extra.taskStore!;
  let run: BackgroundRun;
  try {
    run = await startBackground(core, server, entry, args, extra.signal, extra.requestId);
  } catch (err) {
    // The caller waits for a task, not a tool result: bad arguments are a protocol error here.
    throw new McpError(ErrorCode.InvalidParams, core.out.text(formatError(err), MAX_ERROR_BYTES));
  }
  const ttl = Math.min(extra.taskRequestedTtl ?? MAX_TASK_TTL_MS, MAX_TASK_TTL_MS);
  const task = await store.createTask({ ttl, pollInterval: 1_000 });
  core.taskStore?.bind(task.taskId, run.controller);
  run.done.then(async () => {
    core.taskStore?.unbind(task.taskId);
    // The spec counts a tool result with isError as a failed task; the result stays readable.
    const status = run.state === 'succeeded' ? 'completed' : 'failed';
    await store
      .storeTaskResult(task.taskId, status, core.out.result(run.result ?? textResult('no result', true)))
      .catch(() => {
        // Cancelled already (a terminal state) or dropped: nothing to store.
      });
  });
  return { task };
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
        ...(core.taskStore ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
      },
      instructions: core.instructions(),
      debouncedNotificationMethods: [
        'notifications/tools/list_changed',
        'notifications/resources/list_changed',
      ],
      taskStore: core.taskStore,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: core.genericTools ? [...core.tools(), ...GENERIC_TOOLS] : core.tools(),
  }));

  const onCall = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult | CreateTaskResult> => {
    const { name, arguments: args } = request.params;
    // The request's own signal is the run's: it fires on client cancellation, and closing the
    // session at shutdown fires it too, so calls need no controller of their own.
    const env: CallEnv = {
      signal: extra.signal,
      sampling: samplingFor(server, extra.requestId),
      elicit: elicitFor(core, server, extra.requestId),
    };
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      env.progress = {
        token,
        send: (params) => extra.sendNotification({ method: 'notifications/progress', params }),
      };
    }
    const entry = core.registry.get(name);
    if (!entry) {
      if (core.genericTools && isGenericTool(name)) {
        if (request.params.task) {
          throw new McpError(ErrorCode.MethodNotFound, `${name} does not accept task-augmented calls`);
        }
        // Statuses, lists and stored results: one gate redacts and caps them all.
        const r = await callGenericTool(name, args, {
          core,
          env,
          start: (e, a) => startBackground(core, server, e, a, extra.signal, extra.requestId),
          resume: (id, o, meta) => resumeBackground(core, id, o, meta, samplingFor(server, undefined)),
        });
        return core.out.result(r);
      }
      const names = core.registry.entries().map((e) => e.name);
      const all = core.genericTools ? [...names, ...GENERIC_TOOLS.map((t) => t.name)] : names;
      const hint = core.genericTools ? ' (hatchery_list shows them all)' : '';
      return errorResult(core, new HatcheryError('NOT_FOUND', unknownName('tool', name, all, hint)));
    }
    if (request.params.task && extra.taskStore && core.taskStore) {
      return startTask(core, server, entry, args, extra);
    }
    return (await runHatcheryCall(core, entry, args, env)).result;
  };
  server.setRequestHandler(CallToolRequestSchema, onCall);

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: core.registry.entries().flatMap((e) => [
      {
        uri: e.uri,
        name: e.name,
        title: `${e.name} (hatchery definition)`,
        description: core.out.desc(e.hatchery.desc),
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

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params;
    if (core.outputs.owns(uri)) {
      const text = core.outputs.read(uri);
      if (text === undefined) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `no output ${core.out.text(uri, 200)}: it never existed, or it was dropped (outputs are kept for an hour, the latest 20 at most)`,
        );
      }
      // Parts were cut to the result limit when stored; redacted already.
      return { contents: [{ uri, mimeType: 'text/plain', text }] };
    }
    const drawn = core.registry.byGraphUri(uri);
    if (drawn) {
      const text = core.redact(hatcheryToMermaid(drawn.hatchery));
      return {
        contents: [{ uri, mimeType: MERMAID_MIME, text: core.out.text(text, core.out.maxResultBytes) }],
      };
    }
    const entry = core.registry.byUri(uri);
    if (!entry)
      throw new McpError(ErrorCode.InvalidParams, `no hatchery resource ${core.out.text(uri, 200)}`);
    const bytes = Buffer.byteLength(entry.text);
    if (bytes > core.out.maxResultBytes) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `${entry.name}: the file is ${formatBytes(bytes)}, over the server's limit of ${formatBytes(core.out.maxResultBytes)} per message; read ${entry.file} directly`,
      );
    }
    return { contents: [{ uri: entry.uri, mimeType: entry.mimeType, text: core.redact(entry.text) }] };
  });

  return { server, sessionId: () => server.transport?.sessionId };
}
