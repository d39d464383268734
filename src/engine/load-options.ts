/** What shapes the loading of a file: the MCP servers it may name, and the roots its paths are checked against. */
import type { McpServerDef } from '../schema/hatchery.js';

/** Options that shape how files are loaded (from the CLI or the embedding program). */
export interface LoadOptions {
  /** MCP servers from --mcp-config; a file's own `mcpServers` entries win over them. */
  mcpServers?: Readonly<Record<string, McpServerDef>>;
  /**
   * Folders runs may read and write (a Runtime passes its PathGuard's), against which constant
   * `files`, `write_output` and hatch: paths are checked at load time; a file's own folder is
   * always readable. Without roots those paths are not checked at load (where the file will run
   * is unknown) and hatch: sub-files are checked only below the file's own folder.
   */
  roots?: LoadRoots;
}

/** The roots of LoadOptions, and the runtime's own rule for a constant path a run would write. */
export interface LoadRoots {
  read: readonly string[];
  write: readonly string[];
  /**
   * Why a run of a file in `dir` could not write `abs` (`p` as written), or undefined: the write
   * roots, protected folders (the file's own among them), hatchery files and the other refused files.
   */
  writeProblem?: (p: string, abs: string, dir: string) => string | undefined;
}
