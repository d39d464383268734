/**
 * The plain form of the view, for pipes and CI: one line per event as it happens, indented by the
 * event's depth in the run tree, so a node's start shows at once and its tool calls, model calls and
 * branches sit under it even when parallel branches interleave.
 */
import type { RunEvent } from '../../engine/contracts.js';
import type { TreeEntry } from '../../runtime/run-tree.js';
import { label, oneLine, seconds, shortError, summaryLine, tokens } from './format.js';
import type { Paint } from './style.js';

/** Two spaces per level below the run's top-level nodes. */
function pad(entry: TreeEntry | undefined): string {
  return '  '.repeat(Math.max(0, (entry?.depth ?? 1) - 1));
}

/** `after 2 retries`, `standing in for client`: what else is worth saying of a model call. */
function modelNotes(e: Extract<RunEvent, { type: 'model_call' }>): string {
  const notes: string[] = [];
  if (e.standIn) notes.push(`standing in for ${label(e.standIn)}`);
  if (e.retries) notes.push(`after ${e.retries} retr${e.retries === 1 ? 'y' : 'ies'}`);
  return notes.length > 0 ? ` ${notes.join(', ')}` : '';
}

/** `retry 2, rate limited: waiting 4 s (429 Too many requests)`. */
export function retryText(attempt: number, waitMs: number, rateLimited: boolean, reason: string): string {
  const why = rateLimited ? 'rate limited' : 'failed';
  return `retry ${attempt}, ${why}: waiting ${seconds(waitMs)} (${oneLine(reason, 120)})`;
}

/**
 * The line of one event (`entry` is what the run tree made of it, for its depth), or undefined for
 * events that say nothing new (the top-level run's start, a nested run's end).
 */
export function plainLine(e: RunEvent, entry: TreeEntry | undefined, p: Paint): string | undefined {
  const at = pad(entry);
  switch (e.type) {
    case 'run_start':
      return e.depth > 0 ? `${at}> ${label(e.hatchery)}` : undefined;
    case 'run_end':
      if (e.depth > 0) return undefined;
      return e.ok ? summaryLine(e) : p.red(summaryLine(e));
    case 'node_start':
      return `${at}[${e.step}] ${label(e.node)}${e.item === undefined ? '' : ` #${e.item + 1}`} started ${p.dim(`(${e.kind})`)}`;
    case 'node_end':
      // A resumed run's node taken from the journal cost nothing this time.
      if (e.replayed) return `${at}[${e.step}] ${label(e.node)} (from the journal)`;
      return `${at}[${e.step}] ${label(e.node)} (${seconds(e.ms)}${tokens(e.usage)})`;
    case 'node_error':
      if (e.code === 'INPUT_REQUIRED') return `${at}[${e.step}] ${label(e.node)} waits for an answer`;
      if (e.code === 'ABORTED') return `${at}[${e.step}] ${label(e.node)} cancelled (${seconds(e.ms)})`;
      return p.red(`${at}[${e.step}] ${label(e.node)} failed (${seconds(e.ms)}): ${shortError(e.error)}`);
    case 'tool_start':
      return `${at}- tool ${label(e.tool)} started`;
    case 'tool_call':
      if (e.isError) {
        const why = e.result !== undefined ? `: ${oneLine(e.result)}` : '';
        return p.red(`${at}x tool ${label(e.tool)} failed (${seconds(e.ms)})${why}`);
      }
      return `${at}- tool ${label(e.tool)} (${seconds(e.ms)})`;
    case 'model_retry':
      return p.yellow(
        `${at}~ model ${label(e.model)}: ${retryText(e.attempt, e.waitMs, e.rateLimited, e.reason)}`,
      );
    case 'model_call':
      if (e.error !== undefined) {
        return p.red(
          `${at}x model ${label(e.model)}${modelNotes(e)} failed (${seconds(e.ms)}): ${shortError(e.error)}`,
        );
      }
      return `${at}~ model ${label(e.model)}${modelNotes(e)} (${seconds(e.ms)}${tokens(e.usage)})`;
  }
}
