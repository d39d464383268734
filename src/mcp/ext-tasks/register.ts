/**
 * Registration of the tasks extension on a session, apart from its handlers (handlers.ts): a session
 * is created before the first tools/list is answered, and the handlers' modules (runs, journal,
 * call path) are imported on the first tasks request, with the server ready (host.ready).
 */

import { MissingRequiredClientCapabilityError, type Server } from '@modelcontextprotocol/server';
import { canElicitForm } from '../elicit.js';
import { envelopeCapabilities } from '../envelope.js';
import type { ServerHost } from '../host.js';
import { declaresTasks, TASKS_EXTENSION, TaskIdParams, TaskResult, UpdateTaskParams } from './schemas.js';

/** The empty acknowledgement of tasks/update and tasks/cancel (the SDK adds resultType "complete"). */
const ACK = {};

/**
 * The handlers' module, once the server is ready (its runtime and run journal), for a request whose
 * `envelope` declares the extension (any other is refused).
 */
async function handlers(core: ServerHost, envelope: unknown): Promise<typeof import('./handlers.js')> {
  if (!declaresTasks(envelope)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `Missing required client capability: declare the ${TASKS_EXTENSION} extension in this request's client capabilities to use tasks`,
    );
  }
  const [h] = await Promise.all([import('./handlers.js'), core.ready()]);
  return h;
}

/**
 * Registers the tasks extension on a server: advertises it and handles tasks/get, tasks/update and
 * tasks/cancel. Nothing is registered when the server offers no tasks (--no-journal, tasks: false).
 */
export function registerTasksExtension(server: Server, core: ServerHost): void {
  if (!core.tasks) return;
  server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  server.setRequestHandler('tasks/get', { params: TaskIdParams, result: TaskResult }, async (p, ctx) => {
    const h = await handlers(core, ctx.mcpReq.envelope);
    // Forms only for a client that declared them in this request (see storedTask).
    const forms = canElicitForm(envelopeCapabilities(ctx.mcpReq.envelope));
    return { ...(await h.readTask(core, p.taskId, forms)) };
  });
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams, result: TaskResult }, async (p, ctx) => {
    await (await handlers(core, ctx.mcpReq.envelope)).cancelTask(core, p.taskId);
    return ACK;
  });
  server.setRequestHandler(
    'tasks/update',
    { params: UpdateTaskParams, result: TaskResult },
    async (p, ctx) => {
      const responses: Record<string, unknown> = { ...p.inputResponses, ...ctx.mcpReq.inputResponses };
      // Entries the SDK dropped as not being bare responses are malformed answers, not absent ones.
      for (const k of ctx.mcpReq.droppedInputResponseKeys ?? []) responses[k] ??= null;
      await (await handlers(core, ctx.mcpReq.envelope)).updateTask(core, p.taskId, responses);
      return ACK;
    },
  );
}
