/**
 * The studio's view of a hatchery folder: the MCP server's registry and watcher (one loader, one hot
 * reload, the last good version kept, each failing file's problems with their lines), plus what the
 * page needs on top: each hatchery's graph as SVG with its nodes' ids in the picture.
 */
import type { Hatchery, LoadOptions } from '../engine/contracts.js';
import { hatcheryToMermaid, mermaidId, withoutFontImports } from '../loader/mermaid.js';
import { HatcheryRegistry } from '../mcp/registry.js';
import { HatcheryWatcher } from '../mcp/watcher.js';

/** One hatchery as the page lists it. */
export interface HatcheryView {
  name: string;
  file: string;
  desc: string;
  /** Declared inputs: name -> the prompt shown for it. */
  inputs: Record<string, string>;
  inputRequired: boolean;
  /** The graph as SVG (rendered on the server: the page loads no drawing library). */
  svg: string;
  /** Node name -> the `data-id` of its `<g class="node">` in `svg`. */
  nodeIds: Record<string, string>;
  /** Node name -> node kind. */
  kinds: Record<string, string>;
}

/** What a change of the folder sends to the page: changed entries, removed names, every current problem. */
export interface FolderChange {
  changed: HatcheryView[];
  removed: string[];
  /** The validation problems of each file that does not load (a served older version may still run). */
  problems: ReturnType<HatcheryRegistry['fileProblems']>;
  /** Problems that belong to no single file's validation (a name used by two files). */
  messages: string[];
}

/** The hatchery folder the studio shows, kept current by the MCP server's watcher. */
export class StudioFolder {
  readonly registry: HatcheryRegistry;
  private watcher: HatcheryWatcher | undefined;
  private readonly svgs = new WeakMap<Hatchery, HatcheryView>();
  private render: ((mermaid: string) => string) | undefined;

  constructor(
    dir: string,
    load: LoadOptions,
    private readonly onChange: (change: FolderChange) => void,
    private readonly onError: (message: string) => void = () => undefined,
  ) {
    this.registry = new HatcheryRegistry(dir, { load });
  }

  /** Loads the folder and starts watching it. */
  async start(debounceMs?: number): Promise<void> {
    // Loaded when the studio starts: no other command pays for the renderer.
    const bm = await import('beautiful-mermaid');
    this.render = (m) => withoutFontImports(bm.renderMermaidSVG(m));
    await this.registry.loadAll();
    const watcher = new HatcheryWatcher(this.registry.dir, {
      debounceMs,
      onChange: (paths) => this.refresh(paths),
      onError: (err) => this.onError(`file watcher: ${err.message}`),
    });
    await watcher.start();
    watcher.watchFiles(this.registry.dependencies());
    this.watcher = watcher;
  }

  /** Every hatchery, sorted by name. */
  views(): HatcheryView[] {
    return this.registry.entries().map((e) => this.view(e.hatchery, e.file));
  }

  /** Registry messages no file's problems explain (duplicate names). */
  messages(): string[] {
    const files = this.registry.fileProblems().map((p) => p.file);
    return this.registry.problems().filter((m) => !files.some((f) => m.startsWith(`${f}:`)));
  }

  /** Resolves once pending file changes are handled (tests). */
  async idle(): Promise<void> {
    await this.watcher?.idle();
  }

  /** Stops watching. */
  async close(): Promise<void> {
    await this.watcher?.close();
  }

  private async refresh(paths: string[]): Promise<void> {
    const change = await this.registry.refresh(paths);
    this.watcher?.watchFiles(this.registry.dependencies());
    const names = new Set([...change.added, ...change.updated]);
    this.onChange({
      changed: this.views().filter((v) => names.has(v.name)),
      removed: change.removed,
      problems: this.registry.fileProblems(),
      messages: this.messages(),
    });
  }

  private view(h: Hatchery, file: string): HatcheryView {
    let v = this.svgs.get(h);
    if (!v) {
      const nodes = [...h.nodes];
      v = {
        name: h.name,
        file,
        desc: h.desc,
        inputs: { ...h.inputs },
        inputRequired: h.inputRequired,
        svg: this.render ? this.render(hatcheryToMermaid(h, { layout: true })) : '',
        nodeIds: Object.fromEntries(nodes.map(([name]) => [name, mermaidId(name)])),
        kinds: Object.fromEntries(nodes.map(([name, node]) => [name, node.kind])),
      };
      this.svgs.set(h, v);
    }
    return v;
  }
}
