/**
 * A fake Anthropic Messages server: `new Anthropic({ baseURL: fake.url })` posts to `<url>/v1/messages`.
 * Streams the real event sequence: message_start, content_block_start/delta/stop, message_delta, message_stop.
 */
import {
  argsText,
  type FakeMessageReply,
  FakeServer,
  type FakeServerOptions,
  halves,
  lastUserText,
  pieces,
  roughTokens,
  sampleFromSchema,
  type WireBody,
} from './http.js';
import { anthropicBlocks, anthropicMarkers, PromptCache, withoutMarkers } from './prompt-cache.js';

/**
 * Usage of a reply. Without scripted input tokens, a prefix up to a cache_control marker that an
 * earlier request wrote is reported as cache_read_input_tokens (the rest stays input_tokens).
 */
function usageOf(body: WireBody, reply: FakeMessageReply, cache: PromptCache) {
  const output =
    reply.usage?.output ??
    roughTokens(`${reply.text ?? ''}${(reply.toolCalls ?? []).map(argsText).join('')}`);
  if (reply.usage?.input !== undefined) return { input_tokens: reply.usage.input, output_tokens: output };
  const plain = withoutMarkers(body);
  const total = roughTokens([plain.system, plain.messages]);
  const read = Math.min(cache.read(anthropicBlocks(body), true), total);
  if (read === 0) return { input_tokens: total, output_tokens: output };
  return { input_tokens: total - read, cache_read_input_tokens: read, output_tokens: output };
}

function stopReason(reply: FakeMessageReply): string {
  return reply.stopReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn');
}

/** The tool_use input on the wire: an object, or the raw text when the script sends invalid arguments. */
function inputOf(call: { args?: unknown; rawArgs?: string }): unknown {
  if (call.rawArgs === undefined) return call.args ?? {};
  try {
    return JSON.parse(call.rawArgs);
  } catch {
    return call.rawArgs;
  }
}

const event = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** Fake Anthropic server; see FakeServer for the reply queue and recording. */
export class FakeAnthropic extends FakeServer {
  /** The cache_control markers of each request, in arrival order (`system/0`, `tools/2`, `messages/3/content/0`). */
  readonly cacheMarkers: string[][];
  private readonly cache: PromptCache;

  constructor(options: FakeServerOptions = {}) {
    const cache = new PromptCache();
    const markers: string[][] = [];
    super(
      {
        matches: (path) => path.endsWith('/v1/messages'),
        defaultReply: (body) => {
          const echo = `echo: ${lastUserText(body.messages)}`;
          const choice = body.tool_choice;
          if (choice?.type === 'tool' || (choice?.type === 'any' && body.tools?.length)) {
            const tool = (body.tools ?? []).find((t: WireBody) => t.name === choice.name) ?? body.tools?.[0];
            if (tool)
              return { toolCalls: [{ name: tool.name, args: sampleFromSchema(tool.input_schema, echo) }] };
          }
          return { text: echo };
        },
        message: (body, reply, seq) => {
          markers.push(anthropicMarkers(body));
          const content: unknown[] = [];
          if (reply.text !== undefined && reply.text !== '')
            content.push({ type: 'text', text: reply.text, citations: null });
          (reply.toolCalls ?? []).forEach((c, i) => {
            content.push({ type: 'tool_use', id: c.id ?? `toolu_${i}`, name: c.name, input: inputOf(c) });
          });
          return {
            id: `msg_fake_${seq}`,
            type: 'message',
            role: 'assistant',
            model: body.model,
            content,
            stop_reason: stopReason(reply),
            stop_sequence: null,
            usage: usageOf(body, reply, cache),
          };
        },
        events: (body, reply, seq) => {
          markers.push(anthropicMarkers(body));
          const usage = usageOf(body, reply, cache);
          const frames = [
            event('message_start', {
              message: {
                id: `msg_fake_${seq}`,
                type: 'message',
                role: 'assistant',
                model: body.model,
                content: [],
                stop_reason: null,
                stop_sequence: null,
                usage: { ...usage, output_tokens: 1 },
              },
            }),
          ];
          let index = 0;
          if (reply.text) {
            frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
            frames.push(event('ping', {}));
            for (const p of pieces(reply.text)) {
              frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text: p } }));
            }
            frames.push(event('content_block_stop', { index }));
            index++;
          }
          (reply.toolCalls ?? []).forEach((c, i) => {
            frames.push(
              event('content_block_start', {
                index,
                content_block: { type: 'tool_use', id: c.id ?? `toolu_${i}`, name: c.name, input: {} },
              }),
            );
            for (const part of halves(argsText(c))) {
              frames.push(
                event('content_block_delta', {
                  index,
                  delta: { type: 'input_json_delta', partial_json: part },
                }),
              );
            }
            frames.push(event('content_block_stop', { index }));
            index++;
          });
          frames.push(
            event('message_delta', {
              delta: { stop_reason: stopReason(reply), stop_sequence: null },
              usage: { output_tokens: usage.output_tokens },
            }),
          );
          frames.push(event('message_stop', {}));
          return frames;
        },
        errorBody: (status, message) => ({
          type: 'error',
          error: {
            type:
              status === 429
                ? 'rate_limit_error'
                : status === 529
                  ? 'overloaded_error'
                  : status >= 500
                    ? 'api_error'
                    : status === 401
                      ? 'authentication_error'
                      : status === 404
                        ? 'not_found_error'
                        : 'invalid_request_error',
            message,
          },
        }),
      },
      options,
    );
    this.cache = cache;
    this.cacheMarkers = markers;
  }

  /** Also forgets the cached prefixes and recorded markers. */
  override reset(): void {
    super.reset();
    this.cache.clear();
    this.cacheMarkers.length = 0;
  }

  /** The base URL for the Anthropic SDK (it adds `/v1/messages` itself). */
  get baseURL(): string {
    return this.url;
  }
}
