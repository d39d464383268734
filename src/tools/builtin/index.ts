import type { Tool } from '../types.js';
import { echoTool, readFileTool, writeFileTool } from './files.js';

/** The built-in tools by name. */
export const BUILTIN_TOOLS: ReadonlyMap<string, Tool> = new Map(
  [readFileTool, writeFileTool, echoTool].map((t) => [t.name, t]),
);
