/**
 * The journal record of each run event (the JSON a line holds, before the fast text lines of
 * fast-line.ts): names and numbers as they are, content fields cleaned by the journal (redaction,
 * large strings written once), a model call keyed and its prompt written as the journal keeps it.
 */
import type { RunEvent } from '../../engine/contracts.js';
import { JOURNAL_VERSION, type JournalRecord } from './store.js';

/** What a record needs of its journal. */
export interface RecordContent {
  /** A content string as written: redacted, or a reference to a large string already in the file. */
  str(value: string | undefined): string | { $same: string } | undefined;
  /** A copy of a JSON-like value, cleaned as str() cleans strings. */
  clean(value: unknown, depth: number): unknown;
  /** A model call's cassette key, and what it sent as the journal writes it. */
  modelCall(e: Extract<RunEvent, { type: 'model_call' }>): { key: string; prompt: Record<string, unknown> };
}

/** The record of event `e` at `at` (ms since the epoch). */
export function eventRecord(e: RunEvent, at: number, c: RecordContent): JournalRecord {
  const v = JOURNAL_VERSION;
  switch (e.type) {
    case 'node_start':
      return e.depth === 0 && e.parent === undefined && e.item === undefined
        ? { v, at, type: e.type, node: e.node, kind: e.kind, step: e.step, depth: 0 }
        : {
            v,
            at,
            type: e.type,
            node: e.node,
            kind: e.kind,
            step: e.step,
            depth: e.depth,
            hatchery: e.depth === 0 ? undefined : e.hatchery,
            parent: e.parent,
            call: e.call,
            item: e.item,
          };
    case 'node_error':
      return {
        v,
        at,
        type: e.type,
        node: e.node,
        step: e.step,
        depth: e.depth,
        ...(e.depth === 0 ? {} : { hatchery: e.hatchery }),
        error: c.str(e.error),
        code: e.code,
        ms: round(e.ms),
        parent: e.parent,
        call: e.call,
      };
    case 'model_retry':
      return {
        v,
        at,
        type: e.type,
        node: e.node,
        step: e.step,
        call: e.call,
        depth: e.depth,
        vendor: e.vendor,
        model: e.model,
        attempt: e.attempt,
        waitMs: round(e.waitMs),
        reason: c.str(e.reason),
        rateLimited: e.rateLimited,
      };
    case 'tool_start':
      // Not journaled (the listener skips it): tool_call holds the whole call.
      return { v, at, type: e.type, node: e.node, call: e.call };
    case 'node_end':
      return {
        v,
        at,
        type: e.type,
        node: e.node,
        step: e.step,
        depth: e.depth,
        ...(e.depth === 0 ? {} : { hatchery: e.hatchery }),
        output: c.str(e.output),
        value: c.clean(e.value, 0),
        usage: e.usage,
        ms: round(e.ms),
        path: e.path,
        seq: e.seq,
        next: e.next,
        chose: e.chose,
        parent: e.parent,
        call: e.call,
      };
    case 'model_call': {
      // The cassette's key of the call (Cassette.chat hashes the same text), so the journal can
      // answer the call again (run --replay-run).
      const { key, prompt } = c.modelCall(e);
      return {
        v,
        at,
        type: e.type,
        node: e.node,
        depth: e.depth,
        vendor: e.vendor,
        model: e.model,
        key,
        step: e.step,
        call: e.call,
        retries: e.retries,
        standIn: e.standIn,
        ...prompt,
        text: c.str(e.text),
        toolCalls: c.clean(e.toolCalls, 0),
        stopReason: e.stopReason,
        usage: e.usage,
        error: c.str(e.error),
        code: e.code,
        ms: round(e.ms),
      };
    }
    case 'tool_call':
      return {
        v,
        at,
        type: e.type,
        node: e.node,
        tool: e.tool,
        ref: e.ref,
        depth: e.depth,
        step: e.step,
        call: e.call,
        parentCall: e.parentCall,
        args: c.clean(e.args, 0),
        result: c.str(e.result),
        isError: e.isError,
        ms: round(e.ms),
      };
    case 'run_start':
      return {
        v,
        at,
        type: 'nested_start',
        hatchery: e.hatchery,
        depth: e.depth,
        parent: e.parent,
        call: e.call,
        file: e.file,
        input: c.str(e.input),
        vars: c.clean(e.vars, 0),
      };
    case 'run_end':
      return {
        v,
        at,
        type: 'nested_end',
        hatchery: e.hatchery,
        depth: e.depth,
        parent: e.parent,
        call: e.call,
        ok: e.ok,
        output: c.str(e.output),
        error: c.str(e.error),
        code: e.code,
        usage: e.usage,
        steps: e.steps,
        ms: round(e.ms),
      };
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
