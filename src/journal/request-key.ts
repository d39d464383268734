/**
 * The journal's key of each model call: the cassette's key (16 hex digits of the SHA-256 of the
 * request's canonical text), computed per conversation as it grows. A tool loop sends its whole
 * conversation on every turn; hashing it whole each time made the journal's work per turn grow with
 * the conversation (quadratic in a long loop). Here each conversation keeps the hash state after its
 * messages so far, and a turn hashes only the messages added since the last one.
 */
import { createHash, type Hash } from 'node:crypto';
import type { RunEvent } from '../engine/contracts.js';
import { chatRequestShape, redactDeep, requestKey, sha16 } from './canonical.js';
import { LARGE_STRING } from './fold.js';
import { messageText, requestParts } from './request-text.js';

type ModelCall = Extract<RunEvent, { type: 'model_call' }>;

/** A conversation's hash so far: its head, the message objects hashed, and whether all of it was clean. */
interface Chain {
  head: string;
  sent: unknown[];
  hash: Hash;
  clean: boolean;
}

/** Conversations kept at most per journal (a run has few tool loops going at once). */
const MAX_CHAINS = 32;

/** A model call's key, and whether its request holds nothing to redact. */
export interface CallKey {
  key: string;
  clean: boolean;
  /** Known for one-message requests: every message is plain JSON with no large string. */
  plain?: boolean;
}

/** The keys of one journal's model calls (see the file's comment). */
export class RequestKeys {
  /** Made at the first conversation (a request of two messages or more): most drones send one. */
  private chains: Map<number | string, Chain> | undefined;

  constructor(
    /** True when a piece of canonical text holds nothing redaction would change. */
    private readonly isClean: (text: string) => boolean,
    private readonly secrets: readonly string[],
  ) {}

  /** The call's key: its canonical text hashed as is when nothing in it needs redacting. */
  key(e: ModelCall): CallKey {
    const parts = requestParts(e.vendor, e.request);
    const messages = e.request.messages;
    if (!parts.messages) return this.whole(e, parts.head + parts.tail, false);
    const id = e.call === undefined ? e.step : `${e.step}|${e.call}`;
    let chain = this.chains?.get(id);
    if (chain === undefined && messages.length < 2) {
      // Most drones send one message once: no hash state kept for them.
      let text = parts.head;
      let plain = true;
      if (messages.length === 1) {
        const m = messageText(messages[0], false);
        text += m.text;
        plain = m.plain && m.text.length < LARGE_STRING;
      }
      return this.whole(e, text + parts.tail, plain);
    }
    if (chain === undefined || chain.head !== parts.head || !continues(chain.sent, messages)) {
      chain = {
        head: parts.head,
        sent: [],
        hash: createHash('sha256').update(parts.head),
        clean: this.isClean(parts.head),
      };
      this.chains ??= new Map();
      if (this.chains.size >= MAX_CHAINS) this.chains.delete(this.chains.keys().next().value!);
      this.chains.set(id, chain);
    }
    for (let i = chain.sent.length; i < messages.length; i++) {
      const text = messageText(messages[i], true).text;
      chain.hash.update(i === 0 ? text : `,${text}`);
      // Every string lies whole in one message's text, so checking each piece is checking the text.
      if (chain.clean && !this.isClean(text)) chain.clean = false;
      chain.sent.push(messages[i]);
    }
    if (chain.clean && this.isClean(parts.tail)) {
      return { key: chain.hash.copy().update(parts.tail).digest('hex').slice(0, 16), clean: true };
    }
    return { key: this.redacted(e), clean: false };
  }

  private whole(e: ModelCall, text: string, plain: boolean): CallKey {
    if (this.isClean(text)) return { key: sha16(text), clean: true, plain };
    return { key: this.redacted(e), clean: false, plain };
  }

  /** The cassette's key of a request holding something to redact: of its redacted copy. */
  private redacted(e: ModelCall): string {
    return requestKey(redactDeep(chatRequestShape(e.vendor, e.request), this.secrets));
  }
}

/** True when `messages` starts with the message objects already hashed. */
function continues(sent: readonly unknown[], messages: readonly unknown[]): boolean {
  if (sent.length > messages.length) return false;
  for (let i = 0; i < sent.length; i++) if (sent[i] !== messages[i]) return false;
  return true;
}

/** True when the messages from `from` on are plain JSON with no large string (written as they are). */
export function plainFrom(messages: readonly unknown[], from: number): boolean {
  const keep = messages.length > 1;
  for (let i = from; i < messages.length; i++) {
    const m = messageText(messages[i], keep);
    if (!m.plain || m.text.length >= LARGE_STRING) return false;
  }
  return true;
}
