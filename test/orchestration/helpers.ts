import { HatcheryError } from '../../src/core/errors.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest, Provider } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';

/** The echo node of test/helpers.ts, where these tests have always found it. */
export { echo } from '../helpers.js';

/**
 * What the test model does for one request: wait `delay` ms (or, with `hold`, until the request is
 * aborted: such a call never answers by itself), honouring the signal, then reply or fail.
 */
export interface Behaviour {
  delay?: number;
  hold?: boolean;
  reply?: string;
  fail?: string;
}

/** The user message of a request. */
export const userText = (req: ChatRequest): string => {
  const m = req.messages[req.messages.length - 1];
  return m && m.role === 'user' ? m.content : '';
};

/** Calls in flight of a {@link testModel}: now, the most at once, and how many saw their request aborted. */
export interface InFlight {
  now: number;
  max: number;
  aborted: number;
}

/**
 * The scripted provider answering by prompt through `behave`, counting calls in flight and aborted
 * ones, to check concurrency limits and cancellation. Requests (and their signals) are in
 * `model.calls`.
 */
export function testModel(behave: (req: ChatRequest) => Behaviour): {
  model: ScriptedProvider;
  inFlight: InFlight;
} {
  const inFlight: InFlight = { now: 0, max: 0, aborted: 0 };
  const model = new ScriptedProvider(async (req) => {
    const b = behave(req);
    inFlight.now++;
    inFlight.max = Math.max(inFlight.max, inFlight.now);
    try {
      if (b.delay || b.hold) {
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            clearTimeout(timer);
            inFlight.aborted++;
            reject(new HatcheryError('ABORTED', 'the run was cancelled'));
          };
          const timer = b.hold
            ? undefined
            : setTimeout(() => {
                req.signal.removeEventListener('abort', onAbort);
                resolve();
              }, b.delay);
          if (req.signal.aborted) onAbort();
          else req.signal.addEventListener('abort', onAbort, { once: true });
        });
      }
      return b.fail === undefined
        ? (b.reply ?? `re: ${userText(req)}`)
        : new HatcheryError('PROVIDER', b.fail);
    } finally {
      inFlight.now--;
    }
  });
  return { model, inFlight };
}

/** True when every request `model` received has had its signal aborted. */
export const allAborted = (model: ScriptedProvider): boolean => model.calls.every((c) => c.signal.aborted);

/** A runtime whose drones all use `model`. */
export const runtimeWith = (model?: Provider) =>
  new Runtime({ env: {}, ...(model ? { providers: { openai: model } } : {}) });
