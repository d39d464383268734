/**
 * The top-level scope of a run: its path guard (the hatchery's folder plus the runtime's roots), its
 * ctx (input, declared inputs, `files`), and the checks a hatchery passes before its first node
 * (preflight, js: tools), each kept per loaded hatchery so later runs skip them.
 */

import { ValidationError } from '../core/errors.js';
import type { PathGuard } from '../core/fs/paths.js';
import type { EventPlace, Hatchery, RunState } from '../engine/contracts.js';
import { Scope } from '../engine/scope.js';
import { callsJsTools, jsToolProblems } from '../tools/js-check.js';
import type { ToolResolver } from '../tools/resolve.js';
import { applyVars, loadFiles, requireInput } from './inputs.js';

/** The scopes of one Runtime's runs. */
export class RunScopes {
  private readonly guards = new WeakMap<Hatchery, PathGuard>();
  private readonly ctxBases = new WeakMap<Hatchery, Record<string, unknown>>();
  private readonly preflighted = new WeakSet<Hatchery>();
  /** Hatcheries whose banelings' js: tools were found and their tool_args checked (once per version). */
  private readonly jsChecked = new WeakSet<Hatchery>();

  constructor(
    /** The runtime's guard: its allowed roots and write policy. */
    private readonly guard: PathGuard,
    private readonly tools: ToolResolver,
  ) {}

  /**
   * The path guard of a hatchery: its own folder plus the runtime's allowed roots. The first call for
   * a hatchery also protects its folder, file and dependencies from writes of every run.
   */
  guardFor(h: Hatchery): PathGuard {
    let g = this.guards.get(h);
    if (!g) {
      this.guard.policy.protectHatchery(h);
      g = this.guard.withRoot(h.dir);
      this.guards.set(h, g);
    }
    return g;
  }

  /**
   * A fresh top-level scope: ctx with input, declared inputs and `files`, checked before any node runs.
   * The scope itself when nothing needs a wait (no `files`, js: tools checked by an earlier run).
   */
  scopeFor(
    h: Hatchery,
    shared: RunState,
    depth: number,
    input: string | undefined,
    vars: Readonly<Record<string, string>> | undefined,
    signal: AbortSignal = shared.signal,
    place?: EventPlace,
  ): Scope | Promise<Scope> {
    const guard = this.guardFor(h);
    let base = this.ctxBases.get(h);
    if (!base) {
      base = Scope.ctxBase(h, guard);
      this.ctxBases.set(h, base);
    }
    requireInput(h, input);
    const ctx = Object.create(base) as Record<string, unknown>;
    if (input !== undefined) ctx.input = input;
    applyVars(h, ctx, vars);
    for (const _ in h.files) {
      return loadFiles(h, guard, ctx, signal).then(() =>
        this.checkedScope(h, shared, depth, guard, ctx, signal, place),
      );
    }
    return this.checkedScope(h, shared, depth, guard, ctx, signal, place);
  }

  /** The Scope over a ready ctx, after the preflight checks (and, on a first run, its js: tools). */
  private checkedScope(
    h: Hatchery,
    shared: RunState,
    depth: number,
    guard: PathGuard,
    ctx: Record<string, unknown>,
    signal: AbortSignal,
    place: EventPlace | undefined,
  ): Scope | Promise<Scope> {
    // Only the top-level walk is resumable node by node; a nested run runs again inside its node.
    const path = depth === 0 ? '' : undefined;
    const scope = new Scope({
      hatchery: h,
      shared,
      guard,
      ctx,
      depth,
      path,
      signal,
      parentStep: place?.parent,
      parentCall: place?.call,
    });
    // Preflight checks (API keys) depend only on this runtime's environment unless the run brings a
    // sampling client, so a hatchery that passed them once need not walk its nodes again.
    if (shared.sampling !== undefined || !this.preflighted.has(h)) {
      for (const node of h.nodes.values()) node.preflight?.(scope);
      if (shared.sampling === undefined) this.preflighted.add(h);
    }
    if (!this.jsChecked.has(h)) return this.checkJsTools(h, scope).then(() => scope);
    return scope;
  }
  /**
   * Before the first node of a hatchery's first run: the js: tools its banelings call exist and take
   * their tool_args, so a wrong argument fails before any model is paid. Importing a module runs its
   * code, which loading a file never does; the run would import it anyway.
   */
  private async checkJsTools(h: Hatchery, scope: Scope): Promise<void> {
    if (callsJsTools(h)) {
      let failed: unknown;
      const problems = await jsToolProblems(
        h,
        (ref) =>
          this.tools.js.resolve(ref, scope).catch((err) => {
            failed ??= err;
            throw err;
          }),
        true,
      );
      // A module that is missing or refused fails as the call itself would; wrong arguments are the file's.
      if (failed !== undefined) throw failed;
      if (problems.length > 0) throw new ValidationError(h.file, problems);
    }
    this.jsChecked.add(h);
  }
}
