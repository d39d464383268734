import type { Tool } from '../../engine/contracts.js';
import { echoTool, readFileTool, writeFileTool } from './files.js';
import { httpRequestTool } from './http.js';
import { listDirTool } from './list-dir.js';

export { shellExecTool } from './shell.js';

/** The built-in tools by name (shell_exec is apart: only --allow-shell enables it). */
export const BUILTIN_TOOLS: ReadonlyMap<string, Tool> = new Map(
  [readFileTool, writeFileTool, echoTool, listDirTool, httpRequestTool].map((t) => [t.name, t]),
);
