import type { RunEvent } from '../engine/contracts.js';
import { usd } from '../providers/prices.js';
import type { Usage } from '../providers/types.js';

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
function tokens(usage: Usage | undefined): string {
  if (!usage || (usage.inputTokens === 0 && usage.outputTokens === 0)) return '';
  return `, ${usageText(usage)}`;
}

/** `340 ms` below a second, `4.2 s` above. */
export function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Formats run events as the CLI's stderr lines: one per node, nested runs indented. */
export function progressLine(e: RunEvent): string | undefined {
  const pad = '  '.repeat(e.depth);
  switch (e.type) {
    case 'node_end':
      // A resumed run's node taken from the journal cost nothing this time.
      if (e.replayed) return `${pad}[${e.step}] ${e.node} (from the journal)`;
      return `${pad}[${e.step}] ${e.node} (${seconds(e.ms)}${tokens(e.usage)})`;
    case 'run_start':
      return e.depth > 0 ? `${pad}> ${e.hatchery}` : undefined;
    case 'tool_call':
      return `${pad}  ${e.isError ? 'x' : '-'} tool ${e.tool} (${seconds(e.ms)})`;
    case 'run_end':
      if (e.depth > 0) return undefined;
      return `${e.ok ? 'done' : 'failed'}: ${e.steps} step${e.steps === 1 ? '' : 's'}, ${seconds(e.ms)}${tokens(e.usage)}`;
    default:
      return undefined;
  }
}

/** The listener that writes progressLine()s to stderr, or undefined when the command is quiet. */
export function progressListener(quiet: boolean | undefined): ((e: RunEvent) => void) | undefined {
  if (quiet) return undefined;
  return (e) => {
    const line = progressLine(e);
    if (line) process.stderr.write(`${line}\n`);
  };
}
