import { readFileSync } from 'node:fs';
import type { Tool } from '@modelcontextprotocol/server';
import { HatcheryError, ValidationError } from '../core/errors.js';
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { unexpectedLoadError } from '../loader/limits.js';
import type { PreparedLoad, LoadResult as WholeLoad } from '../loader/prepare.js';
import { isYamlFile } from '../loader/yaml.js';
import { hatcheryTool, preparedTool } from './tool-defs.js';

// The registry's entries and what loads them: one file's text to a listed entry, whole or from the
// first half of its load, and the second half (settling) that completes a deferred entry.

/** What loading one file's text gives: whole, or only its first half (a deferred start). */
export type LoadResult = WholeLoad | { ok: true; prepared: PreparedLoad; hatchery?: undefined };

/**
 * The compiling half of the loader (templates, node kinds, tools, analysis), imported when first
 * needed: a deferred start lists its files without it (see importLoader).
 */
let loader: typeof import('../loader/load.js') | undefined;

/**
 * Imports the compiling half of the loader (once): loads other than a deferred start's need it, and
 * so do a registry's get, entries and settleSome once a deferred start listed files (its loadAll and
 * refresh import it themselves).
 */
export async function importLoader(): Promise<void> {
  loader ??= await import('../loader/load.js');
}

/** A half of the loader that importLoader (or importFirstHalf) must have imported. */
function imported<T>(half: T | undefined): T {
  if (!half) throw new HatcheryError('INTERNAL', 'the hatchery loader is used before it is imported');
  return half;
}

/**
 * The loader's first half (parse, schemas, problems), imported by a deferred start (see
 * importFirstHalf); the compiling half includes it.
 */
let firstHalf: Pick<typeof import('../loader/prepare.js'), 'prepareHatcheryText'> | undefined;

/** Imports the loader's first half (once), for a deferred start. */
export async function importFirstHalf(): Promise<void> {
  firstHalf ??= loader ?? (await import('../loader/prepare.js'));
}

/** The name a loaded file defines. */
export function nameOf(res: { hatchery?: Hatchery; prepared?: PreparedLoad }): string {
  return res.hatchery ? res.hatchery.name : res.prepared!.def.name;
}

/** One listed hatchery: its file text and its MCP tool, whether or not its load has completed. */
export interface ListedEntry {
  readonly name: string;
  /** Absolute path of the file. */
  readonly file: string;
  /** The file as written, served as an MCP resource. */
  readonly text: string;
  readonly tool: Tool;
  /** URI of the definition as an MCP resource. */
  readonly uri: string;
  /** URI of the hatchery's Mermaid flowchart as an MCP resource. */
  readonly graphUri: string;
  /** Media type of `text`: application/json, or application/yaml for a YAML file. */
  readonly mimeType: string;
}

/** One served hatchery: the loaded definition, its file text and its MCP tool. */
export interface RegistryEntry extends ListedEntry {
  readonly hatchery: Hatchery;
}

/** A file listed from the first half of its load (a deferred start), its compile and analysis to come. */
export interface PendingEntry extends ListedEntry {
  readonly hatchery?: undefined;
  readonly prepared: PreparedLoad;
}

/** What one refresh changed; `problems` are the error messages of files that failed to load. */
export interface RegistryChange {
  added: string[];
  updated: string[];
  removed: string[];
  problems: string[];
}

/** A change with nothing in it yet. */
export function emptyChange(): RegistryChange {
  return { added: [], updated: [], removed: [], problems: [] };
}

/** True when a change removed, added or updated a tool. */
export function changedTools(c: RegistryChange): boolean {
  return c.added.length + c.updated.length + c.removed.length > 0;
}

/** A file's text, or undefined when it cannot be read (deleted since it was listed). */
export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** A load that threw: that file's error, so start-up and other reloads go on. */
function thrown(file: string, err: unknown): LoadResult {
  return {
    ok: false,
    error: new ValidationError(file, [{ path: '', message: unexpectedLoadError(err) }]),
  };
}

/**
 * Loads one file's text, whole or (`defer`) only its first half; never throws. A deferred load needs
 * the first half imported (importFirstHalf) or the compiling half (importLoader).
 */
export function loadText(file: string, text: string, defer: boolean, options?: LoadOptions): LoadResult {
  try {
    if (defer) return imported(firstHalf ?? loader).prepareHatcheryText(text, file, options);
    return imported(loader).loadHatcheryText(text, file, options);
  } catch (err) {
    return thrown(file, err);
  }
}

/** The entry a successful load of `file` lists (complete, or pending its second half). */
export function entryOf(
  file: string,
  text: string,
  res: Extract<LoadResult, { ok: true }>,
): RegistryEntry | PendingEntry {
  const name = nameOf(res);
  const listed: ListedEntry = {
    name,
    file,
    text,
    tool: res.hatchery ? hatcheryTool(res.hatchery) : preparedTool(res.prepared),
    uri: `hatchery://${name}`,
    graphUri: `hatchery-graph://${name}`,
    mimeType: isYamlFile(file) ? 'application/yaml' : 'application/json',
  };
  return res.hatchery ? { ...listed, hatchery: res.hatchery } : { ...listed, prepared: res.prepared };
}

/**
 * The second half of a deferred load: the complete entry (`requiredChanged` when the analysis
 * disagrees with the first half's guess of `required: ['input']`), or the file's error.
 */
export function completeEntry(
  e: PendingEntry,
  options?: LoadOptions,
): { ok: true; entry: RegistryEntry; requiredChanged: boolean } | { ok: false; error: ValidationError } {
  let res: LoadResult;
  try {
    res = imported(loader).completeHatcheryText(e.prepared, options);
  } catch (err) {
    res = thrown(e.file, err);
  }
  if (!res.ok) return { ok: false, error: res.error };
  const h = res.hatchery!;
  const tool = hatcheryTool(h);
  const requiredChanged = tool.inputSchema.required?.length !== e.tool.inputSchema.required?.length;
  const { prepared: _, ...listed } = e;
  return { ok: true, entry: { ...listed, hatchery: h, tool }, requiredChanged };
}
