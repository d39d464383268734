/** The texts every form of the view shares: durations, usage, the summary line, safe one-line excerpts. */
import type { RunEvent } from '../../engine/contracts.js';
import { usd } from '../../providers/prices.js';
import type { Usage } from '../../providers/types.js';
import { printable } from '../print.js';

/** `120+30 tokens (20 cached), $0.0012` (the parts known), or '' when nothing was spent. */
export function usageText(usage: Usage | undefined): string {
  if (!usage) return '';
  const parts: string[] = [];
  if (usage.inputTokens + usage.outputTokens > 0) {
    const cached = usage.cachedInputTokens ? ` (${usage.cachedInputTokens} cached)` : '';
    parts.push(`${usage.inputTokens}+${usage.outputTokens} tokens${cached}`);
  }
  if (usage.costUsd !== undefined) parts.push(usd(usage.costUsd));
  return parts.join(', ');
}

/** `, <usageText>` after a duration, or '' for no model call. */
export function tokens(usage: Usage | undefined): string {
  if (!usage || (usage.inputTokens === 0 && usage.outputTokens === 0)) return '';
  return `, ${usageText(usage)}`;
}

/** `340 ms` below a second, `4.2 s` above. */
export function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** What the end of a run is called in its summary line. */
function outcome(e: Extract<RunEvent, { type: 'run_end' }>): string {
  if (e.ok) return 'done';
  if (e.code === 'ABORTED') return 'cancelled';
  if (e.code === 'INPUT_REQUIRED') return 'waiting';
  return 'failed';
}

/** `done: 3 steps, 4.2 s, 1200+300 tokens, $0.0031`, the last line of a run's progress. */
export function summaryLine(e: Extract<RunEvent, { type: 'run_end' }>): string {
  return `${outcome(e)}: ${e.steps} step${e.steps === 1 ? '' : 's'}, ${seconds(e.ms)}${tokens(e.usage)}`;
}

/**
 * The first line of a text (an error, a retry reason), cleaned as the CLI prints (see printable), cut
 * to `max` characters: what fits on one line of progress. Redacted before it is cut, so a cut cannot
 * leave half a secret.
 */
export function oneLine(text: string, max = 160): string {
  const nl = text.indexOf('\n');
  const first = printable(nl >= 0 ? text.slice(0, nl) : text).trim();
  const more = nl >= 0 && text.slice(nl + 1).trim() !== '';
  if (first.length > max) return `${first.slice(0, max - 1)}…`;
  return more ? `${first} …` : first;
}

/** A name from a file or a model (node, tool, hatchery), safe to print on a terminal. */
export function label(text: string): string {
  return oneLine(text, 80);
}

/**
 * An error as a progress line shows it: without the `<file>: node "<name>": ` its message starts with
 * (the line already names the node; the full message follows the run), on one line.
 */
export function shortError(error: string, max = 160): string {
  return oneLine(error.replace(/^\S*: node "[^"]*": /, ''), max);
}
