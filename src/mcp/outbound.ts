import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { OutputStore, StoredOutput } from './outputs.js';
import { type ResultValue, structuredOf } from './results.js';

/** Default cap of a tool result's text (and of its structured content), in bytes: well under 10 MiB. */
const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
/** Default size above which a result's output goes to a resource instead of inline, in bytes. */
export const DEFAULT_MAX_INLINE_BYTES = 50 * 1024;
/** Bytes of an output shown inline when the output itself went to a resource. */
const PREVIEW_BYTES = 2048;
/** Top-level fields up to this many characters of JSON stay in the summary of a result moved out. */
const SMALL_FIELD = 256;
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
  /**
   * Largest text of one tool result, in UTF-8 bytes (default 1 MiB); beyond it the text is cut with a
   * notice, and kept in full as `hatchery-output://` resources for a while.
   */
  maxResultBytes?: number;
  /** Largest tool, input or resource description sent, in UTF-8 bytes (default 4 KiB). */
  maxDescBytes?: number;
  /**
   * Largest result sent inline, in UTF-8 bytes of its JSON (default 50 KiB, at most maxResultBytes);
   * beyond it the output goes to a `hatchery-output://` resource and the result carries a summary
   * and a resource_link.
   */
  maxInlineBytes?: number;
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

/** The first `bytes` of a text, whole characters, marked as cut. */
function previewOf(text: string, bytes: number): string {
  const c = cut(text, bytes);
  return c ? `${c.head}…` : text;
}

/** The resource_link of a stored output's first part. */
function link(stored: StoredOutput, name: string, mimeType: string): CallToolResult['content'][number] {
  const n = stored.parts.length;
  return {
    type: 'resource_link',
    uri: stored.parts[0]!,
    name,
    description: n > 1 ? `part 1 of ${n}; the next parts end in /2, /3 …` : `all of it (${name})`,
    mimeType,
  };
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
  /** Size above which an output goes to a resource, in bytes. */
  readonly maxInlineBytes: number;
  private readonly capped = new WeakMap<CallToolResult, CallToolResult>();
  /** Results this gate made: passing them again changes nothing. */
  private readonly sent = new WeakSet<CallToolResult>();

  constructor(
    /** Replaces known secrets by `[redacted]`. */
    readonly redact: (text: string) => string,
    limits: OutboundLimits = {},
    private readonly outputs?: OutputStore,
  ) {
    this.maxResultBytes = Math.max(1024, limits.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES);
    this.maxDescBytes = Math.max(64, limits.maxDescBytes ?? DEFAULT_MAX_DESC_BYTES);
    this.maxInlineBytes = Math.min(
      this.maxResultBytes,
      Math.max(1024, limits.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES),
    );
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
    return this.fit(this.walk(value, this.redact), limit);
  }

  /** Shortens the strings of a (redacted) value evenly until they fit `limit` bytes; see value(). */
  private fit<T>(value: T, limit: number): T | undefined {
    const lengths: number[] = [];
    this.walk(value, (s) => {
      lengths.push(s.length);
      return s;
    });
    let total = 0;
    for (const n of lengths) total += n;
    if (total * 3 <= limit) return value;
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
      value,
      (s) => (s.length > level ? `${s.slice(0, level)}… (${s.length - level} more characters)` : s),
      false,
    );
  }

  /**
   * A tool result ready to send, in the one shape of results.ts: the structured object redacted,
   * a large output moved to a resource (summarized, with a resource_link), the object capped, and
   * the text block written from it, so both copies say the same. `schema`: the tool declares an
   * output schema, so the object stays whole (long strings shortened beyond the result limit, the
   * full JSON kept as a resource) and an error carries its JSON in the text block only. A result
   * this gate made passes it again unchanged; cheap for small results.
   */
  result(result: CallToolResult, options: { schema?: boolean } = {}): CallToolResult {
    if (this.sent.has(result)) return result;
    const known = this.capped.get(result);
    if (known) return known;
    const value = structuredOf(result);
    let out: CallToolResult;
    if (value !== undefined) out = this.shape(result, value, options.schema === true);
    else if (options.schema) out = this.textOnly(result);
    else {
      // A result built elsewhere as plain text: its text becomes the output (or the error).
      const text = result.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      const others = result.content.filter((b) => b.type !== 'text');
      const wrapped = result.isError ? { error: text, code: 'INTERNAL' } : { output: text };
      out = this.shape({ ...result, content: others }, wrapped, false);
    }
    this.sent.add(out);
    if (out !== result) this.capped.set(result, out);
    return out;
  }

  /** The structured path: redact, move a large output out, cap, write the text block. */
  private shape(result: CallToolResult, value: ResultValue, schema: boolean): CallToolResult {
    const links: CallToolResult['content'] = [];
    let v = this.walk(value, this.redact);
    let text = JSON.stringify(v);
    if (!schema && text.length * 3 > this.maxInlineBytes && Buffer.byteLength(text) > this.maxInlineBytes) {
      v = this.moveOut(v, links);
      text = JSON.stringify(v);
    }
    if (text.length * 3 > this.maxResultBytes && Buffer.byteLength(text) > this.maxResultBytes) {
      const fitted = this.fit(v, this.maxResultBytes);
      if (fitted === undefined) {
        // Too many elements to shorten: nothing of it can be sent whole.
        // An error, so that clients do not look for a structured result that matches a schema.
        const dropped = {
          error: `the structured result was dropped: it is over the server's limit of ${formatBytes(this.maxResultBytes)}; raise --max-result-bytes to receive it`,
          code: 'INTERNAL',
        };
        const out: CallToolResult = {
          ...result,
          content: [{ type: 'text', text: JSON.stringify(dropped) }],
          structuredContent: dropped,
          isError: true,
        };
        if (schema) delete out.structuredContent;
        return out;
      } else {
        if (fitted !== v && this.outputs) {
          // Strings were shortened: the full JSON stays readable as a resource.
          const stored = this.outputs.put(
            JSON.stringify(v, null, 2),
            this.maxResultBytes,
            'application/json',
          );
          links.push(link(stored, 'full structured result', 'application/json'));
        }
        v = fitted;
      }
      text = JSON.stringify(v);
    }
    if (v === value && links.length === 0) {
      // The common case, a small result with nothing to redact: sent as it is.
      const only = result.content.length === 1 ? result.content[0] : undefined;
      if (only?.type === 'text' && only.text === text) return result;
    }
    const others = result.content.filter((b) => b.type !== 'text');
    return { ...result, content: [{ type: 'text', text }, ...others, ...links], structuredContent: v };
  }

  /**
   * A result too large to send inline: a string `output` goes to a resource as text and is replaced
   * by its first part, size and URI; when the rest is still too large, the whole object goes to a
   * resource as JSON and only its small top-level fields stay.
   */
  private moveOut(v: ResultValue, links: CallToolResult['content']): ResultValue {
    const store = this.outputs;
    if (!store) return v;
    let out = v;
    if (typeof v.output === 'string') {
      const { output, ...rest } = v;
      const bytes = Buffer.byteLength(output);
      const stored = store.put(output, this.maxResultBytes);
      out = {
        // A quarter of the inline limit at most, so that the summary itself stays inline.
        output_preview: previewOf(output, Math.min(PREVIEW_BYTES, this.maxInlineBytes >> 2)),
        output_bytes: bytes,
        output_uri: stored.parts[0],
        ...(stored.parts.length > 1 ? { output_parts: stored.parts.length } : {}),
        ...rest,
        note: `the output is ${formatBytes(bytes)}, over the server's inline limit of ${formatBytes(this.maxInlineBytes)}: output_preview is its start; read output_uri${stored.parts.length > 1 ? ' and the next parts (/2, /3 …)' : ''} with resources/read for all of it (kept ${store.ttlText})`,
      };
      links.push(link(stored, 'full output', 'text/plain'));
      if (Buffer.byteLength(JSON.stringify(out)) <= this.maxInlineBytes) return out;
    }
    const json = JSON.stringify(out, null, 2);
    if (Buffer.byteLength(json) <= this.maxInlineBytes) return out;
    const stored = store.put(json, this.maxResultBytes, 'application/json');
    const kept: ResultValue = {};
    const omitted: string[] = [];
    for (const [k, x] of Object.entries(out)) {
      // A failure's message and code always stay: its size is capped already (MAX_ERROR_BYTES).
      const small =
        x === null || typeof x !== 'object' ? JSON.stringify(x ?? null).length <= SMALL_FIELD : false;
      if (small || k === 'error' || k === 'code') kept[k] = x;
      else omitted.push(k);
    }
    links.push(link(stored, 'full result', 'application/json'));
    return {
      ...kept,
      omitted,
      result_bytes: Buffer.byteLength(json),
      result_uri: stored.parts[0],
      ...(stored.parts.length > 1 ? { result_parts: stored.parts.length } : {}),
      note: `the result is ${formatBytes(Buffer.byteLength(json))}, over the server's inline limit of ${formatBytes(this.maxInlineBytes)}: the fields in "omitted" are in the JSON at result_uri (resources/read; kept ${store.ttlText})`,
    };
  }

  /**
   * The text path (errors of tools with an output schema): texts redacted, and a text over the
   * result limit cut, its full text kept in the output store.
   */
  private textOnly(result: CallToolResult): CallToolResult {
    let changed = false;
    const content: CallToolResult['content'] = [];
    for (const block of result.content) {
      if (block.type !== 'text') {
        content.push(block);
        continue;
      }
      const text = this.redact(block.text);
      // Room for the notice, so that the capped result passes this gate again unchanged.
      const c = cut(text, this.maxResultBytes) && cut(text, this.maxResultBytes - NOTICE_BYTES);
      if (!c) {
        content.push(text === block.text ? block : { ...block, text });
        changed ||= text !== block.text;
        continue;
      }
      changed = true;
      const stored = this.outputs?.put(text, this.maxResultBytes);
      const where = stored
        ? ` The full output is kept for a while as ${stored.parts.length} MCP resource${stored.parts.length > 1 ? 's' : ''} of up to ${formatBytes(this.maxResultBytes)} each: ${stored.parts[0]} to ${stored.parts[stored.parts.length - 1]} (read them with resources/read).`
        : ' Raise --max-result-bytes to receive more of it.';
      content.push({
        type: 'text',
        text: `${c.head}\n\n[output truncated: ${formatBytes(c.bytes)} in all, over the server's limit of ${formatBytes(this.maxResultBytes)} per result.${where}]`,
      });
      if (stored) content.push(link(stored, 'full output', 'text/plain'));
    }
    return changed ? { ...result, content } : result;
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
