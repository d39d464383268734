/**
 * A2A messages and hatchery calls, both ways: the parts of a client's message become the call's
 * arguments (only the hatchery's declared inputs), and what a run says becomes agent messages,
 * status updates and the output artifact.
 */
import {
  type Artifact,
  type Message,
  type Part,
  Role,
  type TaskState,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { HatcheryError } from '../../core/errors.js';
import type { Hatchery } from '../../engine/contracts.js';
import { textPart } from '../../tools/a2a/call.js';
import { hatcheryArgs } from '../tool-defs.js';

/** The id of a task's one artifact: the run's output (the same whether built live or from the journal). */
export const OUTPUT_ARTIFACT_ID = 'output';

/** A JSON data part. */
export function dataPart(value: unknown): Part {
  return {
    content: { $case: 'data', value },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  };
}

/** A message of the agent saying `text`, on a task. */
export function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A status update of a task, with the agent's `text` as its message when there is one. */
export function statusUpdate(
  taskId: string,
  contextId: string,
  state: TaskState,
  text?: string,
): TaskStatusUpdateEvent {
  return {
    taskId,
    contextId,
    status: {
      state,
      message: text === undefined ? undefined : agentMessage(taskId, contextId, text),
      timestamp: new Date().toISOString(),
    },
    metadata: {},
  };
}

/**
 * The output artifact of a run that ended well: its text, and its JSON as a data part when the
 * hatchery declares a JSON output (the final node's output_schema) and the text parses.
 */
export function outputArtifact(h: Pick<Hatchery, 'outputSchema'> | undefined, output: string): Artifact {
  const parts = [textPart(output)];
  if (h?.outputSchema !== undefined) {
    try {
      parts.push(dataPart(JSON.parse(output)));
    } catch {
      // A text that is not JSON (cut to the size limit) stays text only.
    }
  }
  return {
    artifactId: OUTPUT_ARTIFACT_ID,
    name: 'output',
    description: 'The output of the hatchery run',
    parts,
    metadata: undefined,
    extensions: [],
  };
}

/** The text of a message's text parts, joined by blank lines; undefined when it has none. */
export function messageText(message: Message): string | undefined {
  const texts = message.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []));
  return texts.length > 0 ? texts.join('\n\n') : undefined;
}

/** The objects of a message's data parts, merged; anything but an object is refused. */
function messageData(message: Message): Record<string, unknown> | undefined {
  let data: Record<string, unknown> | undefined;
  for (const p of message.parts) {
    if (p.content?.$case !== 'data') continue;
    const v: unknown = p.content.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new HatcheryError(
        'USAGE',
        'a data part must be a JSON object of named inputs, e.g. {"topic": "owls"}',
      );
    }
    // No prototype: a "__proto__" key stays a key, which hatcheryArgs then refuses by name.
    data ??= Object.create(null) as Record<string, unknown>;
    for (const [k, value] of Object.entries(v)) data[k] = value;
  }
  return data;
}

/**
 * The arguments of a hatchery call from a message: its text is `input`, the object of its data
 * parts the named inputs, checked exactly as an MCP tool call's (declared names only, strings only).
 */
export function messageArgs(h: Hatchery, message: Message): Record<string, unknown> {
  const text = messageText(message);
  const data = messageData(message);
  if (text === undefined && data === undefined) {
    throw new HatcheryError(
      'USAGE',
      `the message has no text and no data part: send the input of ${h.name} as a text part, and its named inputs as a data part`,
    );
  }
  const args: Record<string, unknown> = Object.create(null);
  if (data) for (const [k, v] of Object.entries(data)) args[k] = v;
  if (text !== undefined) {
    if (args.input !== undefined && !Object.hasOwn(h.inputs, 'input')) {
      throw new HatcheryError(
        'USAGE',
        'the input is given twice: as the text part and as "input" of a data part',
      );
    }
    args.input = text;
  }
  // Checked here, so a bad message is an error of the request, before any task exists.
  hatcheryArgs(h, args);
  return args;
}

/** The answer a message gives to a question: its text, or the `answer` of a data part. */
export function messageAnswer(message: Message): string {
  const text = messageText(message);
  if (text !== undefined) return text;
  const answer = messageData(message)?.answer;
  if (typeof answer === 'string') return answer;
  throw new HatcheryError(
    'USAGE',
    'the task waits for an answer: send it as a text part (or as "answer" in a data part)',
  );
}
