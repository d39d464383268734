import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type ErrorContext, HatcheryError } from '../../core/errors.js';
import { secretValues } from '../../core/secrets.js';
import type { CallRecorder, Tool, ToolResult } from '../../engine/contracts.js';
import {
  canonicalJson,
  chatRequestShape,
  recordedToolRef,
  redactDeep,
  requestKey,
  toolRequestShape,
} from '../../journal/canonical.js';
import { isClientModel, ProviderRegistry, type ResolvedModel } from '../../providers/resolve.js';
import type { ChatRequest, ChatResponse, Provider } from '../../providers/types.js';
import { VENDORS } from '../../providers/vendors.js';
import { diffSize, lineDiff } from './diff.js';
import { type CassetteEntry, headerLine, readCassette } from './format.js';

/** How a cassette is used: `record` writes a new one, `replay` answers from one. */
export type CassetteMode = 'record' | 'replay';

/** Options of Cassette.open. */
export interface CassetteOptions {
  file: string;
  mode: CassetteMode;
  /** Replay only: calls missing from the cassette are made for real and appended to it. */
  recordMissing?: boolean;
  /** The environment whose secret values never reach the cassette (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * A cassette of one run's model and tool calls. Recording appends each call as one JSON line as it
 * completes; replaying answers each call from the recorded entry with the same key, in recorded order
 * when one request repeats (a loop). Used only when a run asks for it: ordinary runs never see it.
 */
export class Cassette implements CallRecorder {
  readonly file: string;
  readonly mode: CassetteMode;
  readonly recordMissing: boolean;
  private readonly secrets: readonly string[];
  /** Where its entries come from, and what to do about a call it lacks (in miss messages). */
  private source: string;
  private hint = 'record it with --record-missing (or record the cassette again)';
  /** Recorded entries by key, each list consumed in order. */
  private readonly byKey = new Map<string, CassetteEntry[]>();
  private readonly all: CassetteEntry[] = [];
  /** The first tool call this replay could not answer. */
  private toolMiss: HatcheryError | undefined;

  private constructor(options: CassetteOptions) {
    this.file = options.file;
    this.mode = options.mode;
    this.recordMissing = options.recordMissing === true;
    this.secrets = secretValues(options.env ?? process.env);
    this.source = `cassette ${options.file}`;
  }

  /** Opens a cassette: `record` starts a new file, `replay` reads one (created when recordMissing and absent). */
  static async open(options: CassetteOptions): Promise<Cassette> {
    const c = new Cassette(options);
    if (options.mode === 'record' || (c.recordMissing && !existsSync(options.file))) {
      mkdirSync(dirname(options.file), { recursive: true });
      writeFileSync(options.file, headerLine());
      return c;
    }
    c.add(await readCassette(options.file));
    return c;
  }

  /**
   * A replaying cassette over entries read elsewhere (a run's journal: run --replay-run); `source`
   * names them in messages ("the journal of run X"), `hint` says what to do about a call they lack.
   */
  static fromEntries(
    entries: readonly CassetteEntry[],
    options: {
      file: string;
      source: string;
      hint: string;
      env?: Readonly<Record<string, string | undefined>>;
    },
  ): Cassette {
    const c = new Cassette({ file: options.file, mode: 'replay', env: options.env });
    c.source = options.source;
    c.hint = options.hint;
    c.add(entries);
    return c;
  }

  private add(entries: Iterable<CassetteEntry>): void {
    for (const e of entries) {
      this.all.push(e);
      const list = this.byKey.get(e.key);
      if (list) list.push(e);
      else this.byKey.set(e.key, [e]);
    }
  }

  /**
   * Wraps the model a node resolved so its calls go through the cassette. Replaying needs no API key:
   * when `resolve` fails for want of one, the model is the node's own, or the one the cassette
   * recorded for that node. A replay is also hermetic: where the environment would choose the model
   * (HATCHERY_MODEL, whichever vendor's key is set), the recording chooses it, so a replay answers
   * the same whatever the caller's shell holds. `sampling`: the run has an MCP client that samples.
   */
  resolveModel(
    resolve: () => ResolvedModel,
    spec: string | undefined,
    where: ErrorContext,
    fallback?: string,
    sampling = false,
  ): ResolvedModel {
    let resolved: ResolvedModel | undefined;
    if (this.mode === 'replay' && !this.recordMissing && environmentChooses(spec, sampling, fallback)) {
      const recorded = this.recordedSpec(where.node);
      if (recorded !== undefined) {
        // Never called: a pure replay answers every call from the cassette or fails with its miss.
        const cause = new HatcheryError('NO_MODEL', 'a replay makes no model call', where);
        resolved = this.keyless(recorded, where, cause, fallback);
      }
    }
    if (resolved === undefined) {
      try {
        resolved = resolve();
      } catch (err) {
        if (
          this.mode !== 'replay' ||
          !(err instanceof HatcheryError) ||
          (err.code !== 'MISSING_API_KEY' && err.code !== 'NO_MODEL')
        ) {
          throw err;
        }
        resolved = this.keyless(spec ?? this.recordedSpec(where.node), where, err, fallback);
      }
    }
    // One provider per resolved model of a run that uses the cassette: its calls go through it.
    const { provider: inner, vendor } = resolved;
    return {
      ...resolved,
      provider: { id: inner.id, chat: (req) => this.chat(inner, vendor, where.node, req) },
    };
  }

  /** The model (`vendor:model`) the cassette recorded for `node`, else for any node. */
  private recordedSpec(node: string | undefined): string | undefined {
    const recorded =
      this.all.find((e) => e.type === 'model' && e.node === node) ?? this.all.find((e) => e.type === 'model');
    return recorded ? `${recorded.request.vendor}:${recorded.request.model}` : undefined;
  }

  /** A model resolved without a key; its provider fails with the original error if a call is not in the cassette. */
  private keyless(
    spec: string | undefined,
    where: ErrorContext,
    cause: HatcheryError,
    fallback: string | undefined,
  ): ResolvedModel {
    let chosen = spec;
    // Replayed without a sampling client, the client's model is what stood in for it when recorded.
    if (chosen !== undefined && isClientModel(chosen))
      chosen = fallback ?? this.recordedSpec(where.node) ?? chosen;
    if (!chosen) throw cause;
    const unavailable: Provider = {
      id: 'unavailable',
      chat: () => Promise.reject(cause),
    };
    const registry = new ProviderRegistry({
      env: {},
      overrides: Object.fromEntries([...VENDORS, { id: 'sampling' }].map((v) => [v.id, unavailable])),
      factory: () => unavailable,
    });
    return registry.resolve(chosen, undefined, undefined, where);
  }

  /** MCP tools and http_request reach other systems: their calls are recorded; other tools run for real. */
  records(tool: Tool): boolean {
    return recordedToolRef(tool.ref);
  }

  /** Answers a tool call from the cassette, or makes it and records it. */
  async tool(
    node: string,
    tool: Tool,
    args: Record<string, unknown>,
    call: () => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const { request, key, hit } = this.find(toolRequestShape(tool.ref, tool.name, args));
    if (hit) return hit.response as unknown as ToolResult;
    if (this.mode === 'replay' && !this.recordMissing) {
      const err = this.miss('tool', `tool call "${tool.name}"`, request, node);
      this.toolMiss ??= err;
      throw err;
    }
    const res = await call();
    const response: Record<string, unknown> = { text: res.text };
    if (res.isError) response.isError = true;
    if (res.structured !== undefined) response.structured = res.structured;
    this.append({ type: 'tool', key, node, request, response });
    return res;
  }

  /** A model call through `inner`, answered from the cassette when replaying. */
  private async chat(
    inner: Provider,
    vendor: string,
    node: string | undefined,
    req: ChatRequest,
  ): Promise<ChatResponse> {
    const { request, key, hit } = this.find(chatRequestShape(vendor, req));
    if (hit) {
      const res = hit.response as unknown as ChatResponse;
      // A streaming caller still sees the text arrive, as one fragment.
      if (req.stream && req.onDelta && res.text) req.onDelta(res.text);
      return {
        text: res.text ?? '',
        toolCalls: res.toolCalls ?? [],
        usage: res.usage,
        stopReason: res.stopReason,
      };
    }
    // A drone's tool-use loop shows a failed tool call to the model, so a tool call that missed
    // surfaces as the next model call missing: report the tool call, the cause.
    if (this.mode === 'replay' && !this.recordMissing) {
      throw this.toolMiss ?? this.miss('model', 'model call', request, node);
    }
    const res = await inner.chat(req);
    this.append({
      type: 'model',
      key,
      node,
      request,
      response: redactDeep(res, this.secrets) as Record<string, unknown>,
    });
    return res;
  }

  /** A call's request as recorded (redacted), its key, and when replaying the next unused entry of that key. */
  private find(shape: Record<string, unknown>) {
    const request = redactDeep(shape, this.secrets) as Record<string, unknown>;
    const key = requestKey(request);
    return { request, key, hit: this.mode === 'replay' ? this.byKey.get(key)?.shift() : undefined };
  }

  private append(entry: CassetteEntry): void {
    appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }

  /** The error of a call the cassette does not hold: the node, and a diff against the nearest recorded request. */
  private miss(
    type: 'model' | 'tool',
    what: string,
    request: Record<string, unknown>,
    node: string | undefined,
  ): HatcheryError {
    const now = canonicalJson(request, 2);
    let nearest: { entry: CassetteEntry; text: string; size: number } | undefined;
    for (const entry of this.all) {
      if (entry.type !== type) continue;
      const text = canonicalJson(entry.request, 2);
      const size = diffSize(text, now) + (entry.node === node ? 0 : 1);
      if (!nearest || size < nearest.size) nearest = { entry, text, size };
    }
    const who = node ? ` of node "${node}"` : '';
    let message = `no recorded answer for this ${what}${who} in ${this.source}; ${this.hint}`;
    if (nearest) {
      const used =
        nearest.text === now ? ' (an identical request was recorded, but this run made it more often)' : '';
      const from = nearest.entry.node ? ` (node "${nearest.entry.node}")` : '';
      message +=
        nearest.text === now
          ? `\nnearest recorded request${from}${used}`
          : `\nnearest recorded request${from} differs (- recorded, + this run):\n${lineDiff(nearest.text, now)}`;
    } else {
      message += `\nthe cassette holds no ${type} call`;
    }
    return new HatcheryError('NOT_FOUND', message.trimEnd(), { node, cassette: this.file });
  }
}

/**
 * True when the environment, not the file, picks a drone's model: it names none (the default model
 * comes from HATCHERY_MODEL or the key set), or it names the MCP client's, no client can sample and
 * no client_fallback stands in.
 */
function environmentChooses(
  spec: string | undefined,
  sampling: boolean,
  fallback: string | undefined,
): boolean {
  return spec === undefined || (isClientModel(spec) && !sampling && fallback === undefined);
}
