/**
 * The journal writes, and --verbose shows, only the messages of each conversation not taken before.
 * The cursor keeps its first conversation apart from the others (most runs have one): conversations
 * that interleave (a tool loop beside spawned agents) must each still resume where they were.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/contracts.js';
import { ConversationCursor } from '../../src/journal/conversations.js';

type ModelCall = Extract<RunEvent, { type: 'model_call' }>;
const call = (step: number, sub: string | undefined, system: string, count: number) =>
  ({
    type: 'model_call',
    step,
    call: sub,
    request: {
      system,
      messages: Array.from({ length: count }, (_, i) => ({ role: 'user', content: `${i}` })),
    },
  }) as unknown as ModelCall;

describe('ConversationCursor', () => {
  it('gives each of several interleaved conversations the first message it has not taken', () => {
    // What each conversation should answer, worked out from a plain map of what was taken.
    const taken = new Map<string, { system: string; count: number }>();
    const expected = (step: number, sub: string | undefined, system: string, count: number, plus: number) => {
      const key = sub === undefined ? String(step) : `${step}|${sub}`;
      const before = taken.get(key);
      const from = before && before.system === system && before.count <= count ? before.count : 0;
      taken.set(key, { system, count: count + plus });
      return from;
    };
    const cursor = new ConversationCursor();
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const step = 1 + rand(3);
      const sub = rand(3) === 0 ? undefined : `a${rand(2)}`;
      const id = `${step}|${sub}`;
      // Mostly growing conversations, sometimes a shorter one or another system prompt (a new conversation).
      const count = rand(8) === 0 ? 1 : (counts.get(id) ?? 0) + 1 + rand(3);
      counts.set(id, count);
      const system = rand(10) === 0 ? 'other' : 'sys';
      const plus = rand(2);
      expect(cursor.next(call(step, sub, system, count), plus)).toBe(
        expected(step, sub, system, count, plus),
      );
    }
  });

  it('starts a conversation again when the first one is followed by another with the same step', () => {
    const cursor = new ConversationCursor();
    expect(cursor.next(call(1, undefined, 's', 1), 1)).toBe(0);
    expect(cursor.next(call(1, 'x', 's', 3))).toBe(0);
    expect(cursor.next(call(1, undefined, 's', 3))).toBe(2);
    expect(cursor.next(call(1, 'x', 's', 5))).toBe(3);
  });
});
