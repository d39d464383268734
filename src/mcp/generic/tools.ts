import type { Tool } from '@modelcontextprotocol/server';
import { hatcheryCancel } from './cancel.js';
import type { GenericTool } from './define.js';
import { hatcheryList } from './list.js';
import { hatcheryResult } from './result.js';
import { hatcheryRespond, hatcheryResume } from './resume.js';
import { hatcheryRuns } from './runs.js';
import { hatcheryRun, hatcheryStart } from './start.js';
import { hatcheryStatus } from './status.js';

/**
 * The generic tools, in the order clients list them: stable tools for clients that keep the tool
 * list they saw first, and for long runs. A new one is a tool in this folder and a line here.
 */
export const GENERIC_TOOLS: readonly GenericTool[] = [
  hatcheryList,
  hatcheryRun,
  hatcheryStart,
  hatcheryStatus,
  hatcheryResult,
  hatcheryCancel,
  hatcheryRuns,
  hatcheryResume,
  hatcheryRespond,
];

const BY_NAME = new Map(GENERIC_TOOLS.map((t) => [t.name, t]));

/** Names of the generic tools; hatcheries cannot take them. */
export const GENERIC_TOOL_NAMES: ReadonlySet<string> = new Set(BY_NAME.keys());

/** The generic tools' definitions, as tools/list gives them (each built once, on first read). */
export function genericDefinitions(): readonly Tool[] {
  return GENERIC_TOOLS.map((t) => t.definition);
}

/** The generic tool of this name, if there is one. */
export function genericTool(name: string): GenericTool | undefined {
  return BY_NAME.get(name);
}
