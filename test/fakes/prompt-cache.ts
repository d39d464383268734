/**
 * Prompt caching as the fakes simulate it. A prompt is a list of blocks (Anthropic: tools, system
 * blocks, message content blocks; OpenAI: tools, then messages); a prefix ending at a block boundary
 * is cached once a request wrote it, and a later request whose own prefix matches reads it back.
 * Like the vendors, prefixes under a minimum size (1024 tokens, at 4 characters a token) are never
 * cached, so small test prompts report no cached tokens.
 */
import { createHash, type Hash } from 'node:crypto';
import type { WireBody } from './http.js';

/** The smallest cacheable prefix, in (rough) tokens, as on the vendors' larger models. */
export const CACHE_MIN_TOKENS = 1024;

/** One block of a prompt in order, with the path of its cache_control marker if it has one. */
export interface PromptBlock {
  /** What identifies the block (cache_control removed). */
  key: unknown;
  /** Characters it adds to the prompt, for the token estimate. */
  chars: number;
  /** `tools/2`, `system/0`, `messages/5/content/0` when the block carries cache_control. */
  marker?: string;
}

/** The cached prefixes of one fake server. */
export class PromptCache {
  private readonly written = new Set<string>();

  constructor(readonly minTokens = CACHE_MIN_TOKENS) {}

  /** Forgets every cached prefix. */
  clear(): void {
    this.written.clear();
  }

  /**
   * Tokens of the longest cached prefix this prompt starts with. `onlyAtMarkers`: Anthropic writes
   * the prefixes ending at cache_control markers only; OpenAI caches every boundary.
   */
  read(blocks: readonly PromptBlock[], onlyAtMarkers: boolean): number {
    const hashes = prefixHashes(blocks);
    let best = 0;
    let chars = 0;
    const write: string[] = [];
    const lastMarker = onlyAtMarkers
      ? blocks.findLastIndex((b) => b.marker !== undefined)
      : blocks.length - 1;
    for (let i = 0; i < blocks.length; i++) {
      chars += blocks[i]?.chars ?? 0;
      const tokens = Math.ceil(chars / 4);
      const h = hashes[i] as string;
      // A hit needs a breakpoint at or after this boundary (Anthropic looks back from its markers).
      if (i <= lastMarker && this.written.has(h)) best = tokens;
      if (tokens >= this.minTokens && (!onlyAtMarkers || blocks[i]?.marker !== undefined)) write.push(h);
    }
    for (const h of write) this.written.add(h);
    return best;
  }
}

function prefixHashes(blocks: readonly PromptBlock[]): string[] {
  const running: Hash = createHash('sha256');
  return blocks.map((b) => {
    running.update(JSON.stringify(b.key));
    running.update('\u0000');
    return running.copy().digest('hex');
  });
}

function unmarked(block: WireBody): WireBody {
  if (block === null || typeof block !== 'object' || !('cache_control' in block)) return block;
  const { cache_control: _drop, ...rest } = block;
  return rest;
}

const size = (v: unknown) => JSON.stringify(v ?? '').length;

/** The blocks of an Anthropic Messages request body, in cache order: tools, system, messages. */
export function anthropicBlocks(body: WireBody): PromptBlock[] {
  const out: PromptBlock[] = [];
  const add = (key: unknown, raw: WireBody, marker: string) =>
    out.push({ key, chars: size(key), ...(raw?.cache_control ? { marker } : {}) });
  (body.tools ?? []).forEach((t: WireBody, i: number) => {
    add(unmarked(t), t, `tools/${i}`);
  });
  if (typeof body.system === 'string') add({ system: body.system }, undefined, '');
  else
    (body.system ?? []).forEach((b: WireBody, i: number) => {
      add({ system: unmarked(b) }, b, `system/${i}`);
    });
  (body.messages ?? []).forEach((m: WireBody, k: number) => {
    if (typeof m.content === 'string') add({ role: m.role, text: m.content }, undefined, '');
    else
      (m.content ?? []).forEach((b: WireBody, l: number) => {
        add({ role: m.role, block: unmarked(b) }, b, `messages/${k}/content/${l}`);
      });
  });
  return out;
}

/** The cache_control markers of an Anthropic request, by path. */
export function anthropicMarkers(body: WireBody): string[] {
  return anthropicBlocks(body).flatMap((b) => (b.marker ? [b.marker] : []));
}

/**
 * The body as it would have been without prompt caching (markers removed, a marked single text
 * block back to its plain string), so token counts stay what they were before caching existed.
 */
export function withoutMarkers(body: WireBody): { system: unknown; messages: unknown } {
  const plain = (content: WireBody) => {
    if (!Array.isArray(content)) return content;
    if (content.length === 1 && content[0]?.type === 'text' && content[0]?.cache_control)
      return content[0].text;
    return content.map(unmarked);
  };
  return {
    system: plain(body.system),
    messages: (body.messages ?? []).map((m: WireBody) => ({ ...m, content: plain(m.content) })),
  };
}

/** The blocks of an OpenAI Chat Completions request body: tools, then each message. */
export function openaiBlocks(body: WireBody): PromptBlock[] {
  const out: PromptBlock[] = [];
  for (const t of body.tools ?? []) out.push({ key: t, chars: size(t) });
  for (const m of body.messages ?? []) out.push({ key: m, chars: size(m) });
  return out;
}
