import { HatcheryError } from '../../src/core/errors.js';
import type { ChatRequest, ChatResponse, Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';

/** An echo baneling: outputs `text` (a template). */
export const echo = (name: string, text: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'tool',
  tool_name: 'echo',
  tool_args: { text },
  ...extra,
});

/** What the test model does for one request: wait `delay` ms (honouring the signal), then reply or fail. */
export interface Behaviour {
  delay?: number;
  reply?: string;
  fail?: string;
}

/** The user message of a request. */
export const userText = (req: ChatRequest): string => {
  const m = req.messages[req.messages.length - 1];
  return m && m.role === 'user' ? m.content : '';
};

/**
 * A provider whose behaviour depends on the prompt; counts calls in flight (and the most at once)
 * and keeps every signal it received, to check cancellation.
 */
export class TestModel implements Provider {
  readonly id = 'test';
  inFlight = 0;
  maxInFlight = 0;
  calls = 0;
  readonly signals: AbortSignal[] = [];
  /** Milliseconds from the start of each call until its signal fired (only for aborted calls). */
  readonly abortedAfter: number[] = [];

  constructor(private readonly behave: (req: ChatRequest) => Behaviour) {}

  async chat(req: ChatRequest): Promise<ChatResponse> {
    this.calls++;
    this.signals.push(req.signal);
    const b = this.behave(req);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const t0 = performance.now();
    try {
      if (b.delay) {
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            clearTimeout(timer);
            this.abortedAfter.push(performance.now() - t0);
            reject(new HatcheryError('ABORTED', 'the run was cancelled'));
          };
          const timer = setTimeout(() => {
            req.signal.removeEventListener('abort', onAbort);
            resolve();
          }, b.delay);
          if (req.signal.aborted) onAbort();
          else req.signal.addEventListener('abort', onAbort, { once: true });
        });
      }
      if (b.fail !== undefined) throw new HatcheryError('PROVIDER', b.fail);
      return {
        text: b.reply ?? `re: ${userText(req)}`,
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 1 },
      };
    } finally {
      this.inFlight--;
    }
  }
}

/** A runtime whose drones all use `model`. */
export const runtimeWith = (model?: Provider) =>
  new Runtime({ env: {}, ...(model ? { providers: { openai: model } } : {}) });
