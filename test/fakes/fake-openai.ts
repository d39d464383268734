/**
 * A fake OpenAI Chat Completions server: `new OpenAI({ baseURL: fake.baseURL })` posts to
 * `<url>/v1/chat/completions`. Streams real `chat.completion.chunk` SSE ending in `data: [DONE]`.
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
import { openaiBlocks, PromptCache } from './prompt-cache.js';

const CREATED = 1_700_000_000;

function ids(reply: FakeMessageReply, seq: number) {
  return (reply.toolCalls ?? []).map((c, i) => c.id ?? `call_${seq}_${i}`);
}

/** Usage of a reply; a repeated prompt prefix (automatic caching) is reported as cached_tokens. */
function usageOf(body: WireBody, reply: FakeMessageReply, cache: PromptCache) {
  const prompt = reply.usage?.input ?? roughTokens(body.messages);
  const completion =
    reply.usage?.output ??
    roughTokens(`${reply.text ?? ''}${(reply.toolCalls ?? []).map(argsText).join('')}`);
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  const cached =
    reply.usage?.input === undefined ? Math.min(cache.read(openaiBlocks(body), false), prompt) : 0;
  if (cached > 0) usage.prompt_tokens_details = { cached_tokens: cached };
  return usage;
}

function finishReason(reply: FakeMessageReply): string {
  return reply.stopReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/** Fake OpenAI server; see FakeServer for the reply queue and recording. */
export class FakeOpenAI extends FakeServer {
  private readonly cache: PromptCache;

  constructor(options: FakeServerOptions = {}) {
    const cache = new PromptCache();
    super(
      {
        matches: (path) => path.endsWith('/chat/completions'),
        defaultReply: (body) => {
          const echo = `echo: ${lastUserText(body.messages)}`;
          const forced =
            (body.tool_choice?.function?.name as string | undefined) ??
            (body.tool_choice === 'required'
              ? (body.tools?.[0]?.function?.name as string | undefined)
              : undefined);
          if (forced) {
            const tool = (body.tools ?? []).find((t: WireBody) => t.function?.name === forced);
            return {
              toolCalls: [{ name: forced, args: sampleFromSchema(tool?.function?.parameters, echo) }],
            };
          }
          const format = body.response_format;
          if (format?.type === 'json_schema') {
            return { text: JSON.stringify(sampleFromSchema(format.json_schema?.schema, echo)) };
          }
          return { text: echo };
        },
        message: (body, reply, seq) => {
          const callIds = ids(reply, seq);
          const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
            id: callIds[i],
            type: 'function',
            function: { name: c.name, arguments: argsText(c) },
          }));
          return {
            id: `chatcmpl-fake-${seq}`,
            object: 'chat.completion',
            created: CREATED,
            model: body.model,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: reply.text ?? (toolCalls.length ? null : ''),
                  refusal: null,
                  ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
                },
                logprobs: null,
                finish_reason: finishReason(reply),
              },
            ],
            usage: usageOf(body, reply, cache),
          };
        },
        events: (body, reply, seq) => {
          const base = {
            id: `chatcmpl-fake-${seq}`,
            object: 'chat.completion.chunk',
            created: CREATED,
            model: body.model,
          };
          const chunk = (delta: unknown, finish: string | null = null) =>
            sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
          const frames = [chunk({ role: 'assistant', content: '', refusal: null })];
          for (const p of pieces(reply.text ?? '')) frames.push(chunk({ content: p }));
          const callIds = ids(reply, seq);
          (reply.toolCalls ?? []).forEach((c, index) => {
            frames.push(
              chunk({
                tool_calls: [
                  { index, id: callIds[index], type: 'function', function: { name: c.name, arguments: '' } },
                ],
              }),
            );
            for (const part of halves(argsText(c))) {
              frames.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
            }
          });
          frames.push(chunk({}, finishReason(reply)));
          if (body.stream_options?.include_usage)
            frames.push(sse({ ...base, choices: [], usage: usageOf(body, reply, cache) }));
          frames.push('data: [DONE]\n\n');
          return frames;
        },
        errorBody: (status, message) => ({
          error: {
            message,
            type:
              status === 429
                ? 'rate_limit_exceeded'
                : status >= 500
                  ? 'server_error'
                  : 'invalid_request_error',
            param: null,
            code: null,
          },
        }),
      },
      options,
    );
    this.cache = cache;
  }

  /** Also forgets the cached prefixes. */
  override reset(): void {
    super.reset();
    this.cache.clear();
  }

  /** The base URL for the OpenAI SDK: `<url>/v1`. */
  get baseURL(): string {
    return `${this.url}/v1`;
  }
}
