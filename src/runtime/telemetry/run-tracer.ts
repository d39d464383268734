/**
 * Run events as spans of the OpenTelemetry GenAI semantic conventions: `invoke_workflow` per run,
 * `invoke_agent` per drone execution (`<kind> <node>` for the other kinds), `chat` per model call,
 * `execute_tool` per tool call. Parents come from the events' places (engine/contracts.ts EventPlace):
 * a node sits under its tool call (or the nested run that call started), else under its parent step,
 * else under the run; the top-level run continues the caller's trace context when it has one.
 */
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { redactText } from '../../core/secrets.js';
import type { RunEvent, RunListener } from '../../engine/contracts.js';
import type { Usage } from '../../providers/types.js';
import { VENDORS } from '../../providers/vendors.js';
import { chatContent, redactedJson } from './content.js';

/** What a RunTracer needs: where spans go and what it may put in them. */
export interface RunTracerOptions {
  tracer: Tracer;
  propagator: TextMapPropagator;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: prompts, answers, tool arguments and results. */
  captureContent: boolean;
  /** The run's secret values, removed from content and error messages. */
  secrets: readonly string[];
}

/** Status messages longer than this are cut: a span is not a log. */
const MAX_MESSAGE = 1_000;
/** Vendors as gen_ai.provider.name spells them (VENDORS, and the MCP client's model); others pass through. */
const PROVIDERS: ReadonlyMap<string, string> = new Map([
  ...VENDORS.map((v) => [v.id, v.otelName] as const),
  ['sampling', 'mcp.sampling'],
]);

const now = () => performance.timeOrigin + performance.now();

/** The spans of one top-level run tree (its nested runs share the listener, so they share this). */
export class RunTracer {
  /** Run spans: 'top', `c<call>` for a run under a tool call, `p<step>` for one under a node. */
  private readonly runs = new Map<string, Span>();
  private readonly steps = new Map<number, Span>();
  private readonly calls = new Map<number, Span>();
  /** The listener to give the run. */
  readonly listener: RunListener = (e) => this.on(e);

  constructor(private readonly o: RunTracerOptions) {}

  private on(e: RunEvent): void {
    switch (e.type) {
      case 'run_start':
        this.runStart(e);
        break;
      case 'run_end':
        this.runEnd(e);
        break;
      case 'node_start':
        this.nodeStart(e);
        break;
      case 'node_end':
        this.end(this.steps, e.step);
        break;
      case 'node_error':
        this.end(this.steps, e.step, e.code ?? '_OTHER', e.error);
        break;
      case 'model_call':
        this.modelCall(e);
        break;
      case 'model_retry':
        this.spanOf(e.call, e.step)?.addEvent('hatchery.model_retry', {
          'hatchery.retry.attempt': e.attempt,
          'hatchery.retry.wait_ms': e.waitMs,
          'hatchery.retry.reason': this.clean(e.reason),
          'hatchery.retry.rate_limited': e.rateLimited,
        });
        break;
      case 'tool_start':
        this.toolStart(e);
        break;
      case 'tool_call':
        if (e.call !== undefined) this.toolEnd(e.call, e.isError, e.result);
        break;
    }
  }

  private toolEnd(call: number, isError: boolean, result: string | undefined): void {
    if (this.o.captureContent && result !== undefined) {
      this.calls.get(call)?.setAttribute('gen_ai.tool.call.result', redactedJson(result, this.o.secrets));
    }
    // A tool's error text is its result: content, shown only when content is captured.
    if (isError) this.end(this.calls, call, 'tool_error', this.o.captureContent ? result : undefined);
    else this.end(this.calls, call);
  }

  private start(
    name: string,
    parent: Context,
    attributes: Attributes,
    kind = SpanKind.INTERNAL,
    startTime?: number,
  ): Span {
    return this.o.tracer.startSpan(name, { kind, attributes, startTime: startTime ?? now() }, parent);
  }

  private runStart(e: Extract<RunEvent, { type: 'run_start' }>): void {
    let parent: Context;
    if (e.depth === 0) {
      parent = e.trace
        ? this.o.propagator.extract(ROOT_CONTEXT, e.trace, defaultTextMapGetter)
        : ROOT_CONTEXT;
    } else {
      parent = this.context(e.call !== undefined ? this.calls.get(e.call) : this.steps.get(e.parent ?? -1));
    }
    const span = this.start(`invoke_workflow ${e.hatchery}`, parent, {
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': e.hatchery,
      'hatchery.run_id': e.runId,
      'hatchery.depth': e.depth,
    });
    this.runs.set(runKey(e), span);
  }

  private runEnd(e: Extract<RunEvent, { type: 'run_end' }>): void {
    const key = runKey(e);
    const span = this.runs.get(key);
    if (span) {
      span.setAttribute('hatchery.steps', e.steps);
      // The usage of a run_end counts the whole tree so far: only the top-level run's is its own.
      if (e.depth === 0) setUsage(span, e.usage);
      this.runs.delete(key);
      this.finish(span, e.ok ? undefined : (e.code ?? '_OTHER'), e.error);
    }
    if (e.depth === 0) {
      // A node or call whose end never came (a cancelled run) must still be exported.
      for (const s of [...this.steps.values(), ...this.calls.values(), ...this.runs.values()]) s.end();
      this.steps.clear();
      this.calls.clear();
      this.runs.clear();
    }
  }

  private nodeStart(e: Extract<RunEvent, { type: 'node_start' }>): void {
    let parent: Span | undefined;
    // The nested run a call or node started holds its nodes; else the call or node itself does.
    if (e.call !== undefined) parent = this.runs.get(`c${e.call}`) ?? this.calls.get(e.call);
    else if (e.parent !== undefined) parent = this.runs.get(`p${e.parent}`) ?? this.steps.get(e.parent);
    parent ??= this.runs.get('top');
    const attributes: Attributes = { 'hatchery.node.kind': e.kind, 'hatchery.step': e.step };
    let name: string;
    if (e.kind === 'drone') {
      name = `invoke_agent ${e.node}`;
      attributes['gen_ai.operation.name'] = 'invoke_agent';
      attributes['gen_ai.agent.name'] = e.node;
    } else {
      name = `${e.kind} ${e.node}`;
    }
    this.steps.set(e.step, this.start(name, this.context(parent), attributes));
  }

  private modelCall(e: Extract<RunEvent, { type: 'model_call' }>): void {
    const provider = PROVIDERS.get(e.vendor) ?? e.vendor;
    const model = e.request.model || e.model;
    const owner = this.spanOf(e.call, e.step);
    owner?.setAttributes({ 'gen_ai.provider.name': provider, 'gen_ai.request.model': model });
    const end = now();
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
    };
    if (e.request.temperature !== undefined) attributes['gen_ai.request.temperature'] = e.request.temperature;
    if (e.request.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = e.request.maxTokens;
    if (e.retries) attributes['hatchery.retries'] = e.retries;
    if (e.standIn) attributes['hatchery.stand_in'] = e.standIn;
    const span = this.start(`chat ${model}`, this.context(owner), attributes, SpanKind.CLIENT, end - e.ms);
    if (e.error === undefined) {
      span.setAttribute('gen_ai.response.model', model);
      if (e.stopReason) span.setAttribute('gen_ai.response.finish_reasons', [e.stopReason]);
    }
    if (e.usage) setUsage(span, e.usage);
    if (this.o.captureContent) span.setAttributes(chatContent(e, this.o.secrets));
    this.finish(span, e.error === undefined ? undefined : (e.code ?? '_OTHER'), e.error, end);
  }

  private toolStart(e: Extract<RunEvent, { type: 'tool_start' }>): void {
    const parent = this.context(this.spanOf(e.parentCall, e.step));
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': e.tool,
      // The model's id when a model asked for the call; a baneling's call has only ours.
      'gen_ai.tool.call.id': e.toolCallId ?? String(e.call),
      'gen_ai.tool.type': e.ref?.startsWith('mcp:') ? 'extension' : 'function',
      'hatchery.node': e.node,
    };
    if (e.ref) attributes['hatchery.tool.ref'] = e.ref;
    if (this.o.captureContent && e.args) {
      attributes['gen_ai.tool.call.arguments'] = redactedJson(e.args, this.o.secrets);
    }
    const span = this.start(`execute_tool ${e.tool}`, parent, attributes);
    this.calls.set(e.call, span);
    // MCP servers this call reaches continue the trace under this span (tools/mcp-client.ts sends it).
    const carrier: Record<string, string> = {};
    this.o.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    if (carrier.traceparent) {
      e.trace = carrier.tracestate
        ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
        : { traceparent: carrier.traceparent };
    }
  }

  /** The span of a spawned agent's call when there is one, else of the node execution `step`. */
  private spanOf(call: number | undefined, step: number): Span | undefined {
    return (call !== undefined ? this.calls.get(call) : undefined) ?? this.steps.get(step);
  }

  private context(span: Span | undefined): Context {
    return span ? trace.setSpan(ROOT_CONTEXT, span) : ROOT_CONTEXT;
  }

  private end(map: Map<number, Span>, id: number, type?: string, message?: string): void {
    const span = map.get(id);
    if (!span) return;
    map.delete(id);
    this.finish(span, type, message);
  }

  private finish(span: Span, type: string | undefined, message: string | undefined, at = now()): void {
    if (type !== undefined) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.clean(message ?? type) });
    }
    span.end(at);
  }

  private clean(text: string): string {
    const t = redactText(text, this.o.secrets, { authHeaders: true });
    return t.length > MAX_MESSAGE ? `${t.slice(0, MAX_MESSAGE)}…` : t;
  }
}

function runKey(e: { depth: number; call?: number; parent?: number }): string {
  if (e.depth === 0) return 'top';
  return e.call !== undefined ? `c${e.call}` : `p${e.parent}`;
}

function setUsage(span: Span, usage: Usage): void {
  span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
  span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
  if (usage.cachedInputTokens !== undefined) {
    span.setAttribute('gen_ai.usage.cache_read.input_tokens', usage.cachedInputTokens);
  }
}
