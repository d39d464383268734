import type { OutboundGuard } from './outbound.js';
import type { ListedEntry } from './registry.js';

/** Longest tool description quoted in the server instructions. */
const INSTRUCTION_DESC_LIMIT = 200;
/** Most tools listed by name in the server instructions. */
const INSTRUCTION_TOOL_LIMIT = 50;

/** The server instructions for a folder's listed hatcheries: what the tools are, and how to use the generic ones. */
export function serverInstructions(
  dir: string,
  entries: readonly ListedEntry[],
  out: OutboundGuard,
  genericTools: boolean,
): string {
  const lines = [
    `hatchery-mcp runs JSON-defined LLM workflows ("hatcheries") from ${dir}. Each hatchery is a tool: pass the text to work on as "input", plus the named inputs its schema lists; the result is the workflow's final output.`,
  ];
  if (entries.length === 0) lines.push('No hatchery is loaded yet.');
  else {
    lines.push('Hatcheries loaded at start:');
    for (const e of entries.slice(0, INSTRUCTION_TOOL_LIMIT)) {
      lines.push(`- ${e.name}: ${out.text(e.tool.description ?? '', INSTRUCTION_DESC_LIMIT)}`);
    }
    if (entries.length > INSTRUCTION_TOOL_LIMIT)
      lines.push(`- and ${entries.length - INSTRUCTION_TOOL_LIMIT} more`);
  }
  if (genericTools) {
    lines.push(
      'Files are reloaded when they change. hatchery_list shows what is loaded now and hatchery_run runs a hatchery by name, even one added after your tool list was fetched.',
      'Runs can take minutes. If your tool calls time out (often after 60 s), use hatchery_start to get a run id at once, then call hatchery_result with it (it waits up to wait_seconds) until it returns the result; hatchery_status shows progress and hatchery_cancel stops the run.',
      'Runs are journaled: hatchery_runs lists them, hatchery_resume continues one that failed or was interrupted without paying again for the nodes that finished, and hatchery_respond answers a run that waits for input (state input_required).',
    );
  }
  return lines.join('\n');
}
