import type { RunEvent } from '../engine/contracts.js';

function tokens(e: Extract<RunEvent, { type: 'node_end' }>): string {
  if (!e.usage || (e.usage.inputTokens === 0 && e.usage.outputTokens === 0)) return '';
  return `, ${e.usage.inputTokens}+${e.usage.outputTokens} tokens`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Formats run events as the CLI's stderr lines: one per node, nested runs indented. */
export function progressLine(e: RunEvent): string | undefined {
  const pad = '  '.repeat(e.depth);
  switch (e.type) {
    case 'node_end':
      // A resumed run's node taken from the journal cost nothing this time.
      if (e.replayed) return `${pad}[${e.step}] ${e.node} (from the journal)`;
      return `${pad}[${e.step}] ${e.node} (${seconds(e.ms)}${tokens(e)})`;
    case 'run_start':
      return e.depth > 0 ? `${pad}> ${e.hatchery}` : undefined;
    case 'tool_call':
      return `${pad}  ${e.isError ? 'x' : '-'} tool ${e.tool} (${seconds(e.ms)})`;
    case 'run_end':
      if (e.depth > 0) return undefined;
      return e.ok
        ? `done: ${e.steps} step${e.steps === 1 ? '' : 's'}, ${seconds(e.ms)}${e.usage.inputTokens + e.usage.outputTokens > 0 ? `, ${e.usage.inputTokens}+${e.usage.outputTokens} tokens` : ''}`
        : undefined;
    default:
      return undefined;
  }
}
