import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { OutputStore } from './outputs.js';

/** Default cap of a tool result's text (and of its structured content), in bytes: well under 10 MiB. */
const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
/** Default cap of a tool or resource description (and of each input's description), in bytes. */
const DEFAULT_MAX_DESC_BYTES = 4096;
/** Cap of a log message, error text or progress message, in bytes. */
const MAX_MESSAGE_BYTES = 16 * 1024;
/** Cap of an error result's text, in bytes: the problem, not the content of a broken file. */
export const MAX_ERROR_BYTES = 64 * 1024;
/** Bytes kept free for the notice that ends a cut result. */
const NOTICE_BYTES = 512;
/** Strings of structured content are never cut below this many characters. */
const MIN_STRING_CAP = 64;

/** Limits of what the server sends. */
export interface OutboundLimits {
  /** Largest text of one tool result, in UTF-8 bytes; beyond it the text is cut with a notice. */
  maxResultBytes?: number;
  /** Largest tool, input or resource description, in UTF-8 bytes. */
  maxDescBytes?: number;
}

/** The first `limit` UTF-8 bytes of `text` (whole characters) and the byte length, or undefined when it fits. */
function cut(text: string, limit: number): { head: string; bytes: number } | undefined {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no measuring.
  if (text.length * 3 <= limit) return undefined;
  const bytes = Buffer.byteLength(text);
  if (bytes <= limit) return undefined;
  // A character split at the boundary decodes to U+FFFD: drop it.
  const head = Buffer.from(text)
    .subarray(0, limit)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return { head, bytes };
}

/** "1.2 MB", "340 KB", "12 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)} MB`;
  if (n >= 1_000) return `${Math.round(n / 1_000)} KB`;
  return `${n} bytes`;
}

/**
 * The one gate of everything the server sends to clients (tool results, errors, structured
 * content, statuses, resources, logs, descriptions, progress): secrets are redacted and sizes
 * capped, so that no message exceeds what clients accept (the SDK client drops the connection on a
 * message over 10 MiB) and no secret leaves through a channel the text results would have hidden.
 */
export class OutboundGuard {
  /** Cap of a tool result's text, in bytes. */
  readonly maxResultBytes: number;
  /** Cap of a description, in bytes. */
  readonly maxDescBytes: number;
  private readonly capped = new WeakMap<CallToolResult, CallToolResult>();

  constructor(
    /** Replaces known secrets by `[redacted]`. */
    readonly redact: (text: string) => string,
    limits: OutboundLimits = {},
    private readonly outputs?: OutputStore,
  ) {
    this.maxResultBytes = Math.max(1024, limits.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES);
    this.maxDescBytes = Math.max(64, limits.maxDescBytes ?? DEFAULT_MAX_DESC_BYTES);
  }

  /** Redacts a text and cuts it to `limit` bytes, ending with "… (N more bytes)". */
  text(text: string, limit = MAX_MESSAGE_BYTES): string {
    const t = this.redact(text);
    const c = cut(t, limit);
    return c ? `${c.head}… (${formatBytes(c.bytes - Buffer.byteLength(c.head))} more)` : t;
  }

  /** A description: redacted, cut to the description cap. */
  desc(text: string): string {
    return this.text(text, this.maxDescBytes);
  }

  /** A tool as listed: description and schema descriptions redacted and capped. */
  tool(tool: Tool): Tool {
    const out: Tool = { ...tool };
    if (tool.description !== undefined) out.description = this.desc(tool.description);
    const props = tool.inputSchema.properties as Record<string, { description?: unknown }> | undefined;
    if (props) {
      const capped: Record<string, object> = {};
      for (const [k, p] of Object.entries(props)) {
        capped[k] = typeof p.description === 'string' ? { ...p, description: this.desc(p.description) } : p;
      }
      out.inputSchema = { ...tool.inputSchema, properties: capped as Tool['inputSchema']['properties'] };
    }
    // An output schema may carry long descriptions too; one that cannot fit is not advertised.
    if (tool.outputSchema) {
      const s = this.value(tool.outputSchema, this.maxDescBytes * 16);
      if (s) out.outputSchema = s;
      else delete out.outputSchema;
    }
    return out;
  }

  /**
   * A structured value with every string redacted (keys too), copied only where something changed;
   * strings are shortened evenly when their total exceeds `limit` bytes. Undefined when the value
   * cannot fit even so (too many elements): the caller drops it and says so.
   */
  value<T>(value: T, limit = this.maxResultBytes): T | undefined {
    const lengths: number[] = [];
    const redacted = this.walk(value, (s) => {
      const r = this.redact(s);
      lengths.push(r.length);
      return r;
    });
    let total = 0;
    for (const n of lengths) total += n;
    if (total * 3 <= limit) return redacted;
    // Water level: the largest per-string cap whose total fits (rarely needed, so no hurry).
    const budget = Math.floor(limit / 3);
    if (lengths.length * MIN_STRING_CAP > budget) return undefined;
    lengths.sort((a, b) => a - b);
    let level = budget;
    let used = 0;
    for (let i = 0; i < lengths.length; i++) {
      const rest = lengths.length - i;
      if (used + lengths[i]! * rest > budget) {
        level = Math.floor((budget - used) / rest);
        break;
      }
      used += lengths[i]!;
    }
    level = Math.max(level, MIN_STRING_CAP);
    return this.walk(
      redacted,
      (s) => (s.length > level ? `${s.slice(0, level)}… (${s.length - level} more characters)` : s),
      false,
    );
  }

  /**
   * A tool result ready to send: texts redacted and capped (a long text keeps its first part, the
   * rest stays readable as resources named in a notice and a resource_link), structured content
   * redacted and capped. Cheap for small results: one length check and the redaction.
   */
  result(result: CallToolResult): CallToolResult {
    const known = this.capped.get(result);
    if (known) return known;
    let changed = false;
    let big = false;
    const content = result.content.map((block) => {
      if (block.type !== 'text') return block;
      const t = this.redact(block.text);
      if (t.length * 3 > this.maxResultBytes) big = true;
      if (t === block.text) return block;
      changed = true;
      return { ...block, text: t };
    });
    let out: CallToolResult = changed ? { ...result, content } : result;
    if (big) out = this.capText(out);
    if (result.structuredContent !== undefined) {
      const s = this.value(result.structuredContent);
      if (s !== result.structuredContent) {
        out = out === result ? { ...result } : out;
        if (s === undefined) {
          delete out.structuredContent;
          out.content = [
            ...out.content,
            {
              type: 'text',
              text: `(the structured result was dropped: it is over the server's limit of ${formatBytes(this.maxResultBytes)}; raise --max-result-bytes to receive it)`,
            },
          ];
        } else out.structuredContent = s;
      }
    }
    if (out !== result) this.capped.set(result, out);
    return out;
  }

  /** Cuts the long text blocks of a result; their full text goes to the output store. */
  private capText(result: CallToolResult): CallToolResult {
    const content: CallToolResult['content'] = [];
    let cutAny = false;
    for (const block of result.content) {
      if (block.type !== 'text' || !cut(block.text, this.maxResultBytes)) {
        content.push(block);
        continue;
      }
      // Room for the notice, so that the capped result passes this gate again unchanged.
      const c = cut(block.text, this.maxResultBytes - NOTICE_BYTES)!;
      cutAny = true;
      const stored = this.outputs?.put(block.text, this.maxResultBytes);
      const where = stored
        ? ` The full output is kept for a while as ${stored.parts.length} MCP resource${stored.parts.length > 1 ? 's' : ''} of up to ${formatBytes(this.maxResultBytes)} each: ${stored.parts[0]} to ${stored.parts[stored.parts.length - 1]} (read them with resources/read).`
        : ' Raise --max-result-bytes to receive more of it.';
      content.push({
        type: 'text',
        text: `${c.head}\n\n[output truncated: ${formatBytes(c.bytes)} in all, over the server's limit of ${formatBytes(this.maxResultBytes)} per result.${where}]`,
      });
      if (stored) {
        content.push({
          type: 'resource_link',
          uri: stored.parts[0]!,
          name: 'full output (part 1)',
          description: `The full output, part 1 of ${stored.parts.length}; the next parts end in /2, /3 …`,
          mimeType: 'text/plain',
        });
      }
    }
    return cutAny ? { ...result, content } : result;
  }

  /** Applies `f` to every string (and object key) of a JSON-like value; copies only what changed. */
  private walk<T>(value: T, f: (s: string) => string, keys = true): T {
    if (typeof value === 'string') return f(value) as T;
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.walk(value[i], f, keys);
        if (v !== value[i]) {
          copy ??= value.slice();
          copy[i] = v;
        }
      }
      return (copy ?? value) as T;
    }
    let copy: Record<string, unknown> | undefined;
    const obj = value as Record<string, unknown>;
    for (const k in obj) {
      const v = this.walk(obj[k], f, keys);
      const key = keys ? f(k) : k;
      if (v !== obj[k] || key !== k) {
        copy ??= { ...obj };
        if (key !== k) delete copy[k];
        copy[key] = v;
      }
    }
    return (copy ?? value) as T;
  }
}
