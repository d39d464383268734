/**
 * Turns what templates read and what the dataflow knows into problems: a variable set on no path to
 * its template is an error, one set on some paths only is a warning (unless the template copes with
 * its absence), a bare name is an error with the `ctx.`/`out.` spelling it probably meant.
 */
import type { ValidationProblem } from '../../core/errors.js';
import { didYouMean, listNames, quote } from '../../schema/suggest.js';
import type { Presence } from './bitset.js';
import type { Flow } from './flow.js';
import type { TemplateRef } from './template-refs.js';

/** What is always in ctx: declared inputs, `files`, the run's input and `fread`. */
export interface AlwaysSet {
  readonly inputs: readonly string[];
  readonly files: readonly string[];
}

/** Checks of one file's template variables against its dataflow. */
export class VarChecks {
  /** Nodes saving each ctx name (save_output). */
  private readonly savers = new Map<string, string[]>();
  private readonly always: Set<string>;
  private laterChecks = 50;

  constructor(
    private readonly flow: Flow,
    private readonly set: AlwaysSet,
    private readonly problems: ValidationProblem[],
  ) {
    for (const n of flow.nodes) {
      const s = n.def.save_output;
      if (typeof s !== 'string') continue;
      const list = this.savers.get(s);
      if (list) list.push(n.name);
      else this.savers.set(s, [n.name]);
    }
    this.always = new Set([...set.inputs, ...set.files, 'input', 'fread']);
  }

  /**
   * Reports the refs of one template of node `i`; `has[j]` says whether the variable of `refs[j]` is
   * set where the template renders (on every path, some or none).
   */
  check(
    i: number,
    field: string,
    refs: readonly TemplateRef[],
    has: readonly (Presence | undefined)[],
  ): void {
    const node = this.flow.nodes[i]!;
    const path = `nodes/${node.index}/${field}`;
    const seen = new Set<string>();
    for (let j = 0; j < refs.length; j++) {
      const r = refs[j]!;
      const key = `${r.kind}:${r.name}:${r.soft}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const p = this.problem(i, r, has[j] ?? 'none');
      if (p) this.problems.push({ path, ...p });
    }
  }

  private problem(
    i: number,
    r: TemplateRef,
    presence: Presence,
  ): Omit<ValidationProblem, 'path'> | undefined {
    // Prototype names (`constructor`, `__proto__`...) are refused by the template sandbox at run
    // time with its own, more precise message; they are never a variable of the file.
    if (r.name in Object.prototype || r.name === '__proto__') return undefined;
    const node = this.flow.nodes[i]!.name;
    // Messages are built only for a problem: most refs of a clean file return before them.
    const at = () => `(line ${r.line}, column ${r.column} of the template)`;
    const dflt = () => `{{ ${r.expr} | default("") }}`;
    if (r.kind === 'bare') return this.bare(r, at());
    // Set on every path, or on some where the template copes with its absence.
    if (presence === 'all' || (presence === 'some' && r.soft)) return undefined;
    if (r.kind === 'ctx') {
      if (this.always.has(r.name)) return undefined;
      const savers = this.savers.get(r.name) ?? [];
      const named = savers.map((s) => quote(s)).join(', ');
      if (presence === 'some') {
        return {
          severity: 'warning',
          message: `${r.expr} ${at()} may be undefined when ${quote(node)} runs: it is set on some paths to this node but not on all${savers.length ? ` (saved by ${named})` : ''}`,
          fix: `give a default, ${dflt()}, or test it first: {% if ${r.expr} is defined %}...{% endif %}`,
        };
      }
      const own = savers.length === 1 && savers[0] === node;
      const loopVar = r.name === 'item' || r.name === 'index' || r.name === 'iteration';
      const why =
        r.name === 'item' || r.name === 'index'
          ? `ctx.${r.name} is set only in the chain a map node runs, and ${quote(node)} does not run there`
          : r.name === 'iteration'
            ? `ctx.iteration is set only in a loop's body chain (and after the loop), and ${quote(node)} does not run there`
            : own
              ? `only ${quote(node)} itself saves it (save_output), after it runs`
              : savers.length > 0
                ? `only ${named} ${savers.length > 1 ? 'save' : 'saves'} it (save_output), and never before ${quote(node)} runs`
                : 'no declared input, files entry or save_output has that name';
      const hint = this.hint(r.name, () =>
        [...this.always, ...this.savers.keys()].filter((n) => n !== r.name),
      );
      const fix = loopVar
        ? `read ctx.${r.name} only in the chain a ${r.name === 'iteration' ? 'loop runs (its "body")' : 'map runs (its "node")'}`
        : own
          ? `save it in a node that runs before ${quote(node)}`
          : savers.length > 0
            ? `route ${quote(savers[0]!)} before ${quote(node)}`
            : `declare ${quote(r.name)} in "inputs", or add "save_output": ${quote(r.name)} to a node that runs before ${quote(node)}`;
      if (r.soft)
        return {
          severity: 'warning',
          message: `${r.expr} ${at()} is never defined when ${quote(node)} runs, so the template always takes its default or guard: ${why}${hint}`,
          fix,
        };
      return {
        message: `${r.expr} ${at()} is not defined when ${quote(node)} runs: ${why}${hint}`,
        fix: `${fix}, or give a default: ${dflt()}`,
      };
    }
    const target = this.flow.index.get(r.name);
    if (target === undefined) {
      this.nodeNames ??= [...this.flow.index.keys()];
      return {
        severity: r.soft ? 'warning' : undefined,
        message: `${r.expr} ${at()} names no node: this file has no node named ${quote(r.name)}${this.hint(r.name, () => this.flow.index.keys())}; nodes: ${listNames(this.nodeNames)}`,
        fix: 'out.<name> reads the output of the node with that name',
      };
    }
    if (presence === 'some')
      return {
        severity: 'warning',
        message: `${r.expr} ${at()} may be unset when ${quote(node)} runs: node ${quote(r.name)} runs before it on some paths but not on all`,
        fix: `give a default, ${dflt()}, or test it first: {% if ${r.expr} is defined %}...{% endif %}`,
      };
    const when =
      target === i
        ? 'it is the output of this node itself, set only after it runs'
        : !this.flow.reachable()[target]
          ? `node ${quote(r.name)} never runs: nothing routes to it`
          : this.fanOutChains()[target]
            ? `node ${quote(r.name)} runs in the chain of a parallel branch or a map, whose out.* stay inside that chain (save_output reaches the rest of the run, and a parallel sets out.<branch>)`
            : `node ${quote(r.name)} ${this.runsLater(i, target) ? 'runs only after it' : 'never runs before it'}`;
    if (r.soft)
      return {
        severity: 'warning',
        message: `${r.expr} ${at()} is never set when ${quote(node)} runs, so the template always takes its default or guard: ${when}`,
        fix: `read the output of a node that runs before ${quote(node)}`,
      };
    return {
      message: `${r.expr} ${at()} is not set when ${quote(node)} runs: ${when}`,
      fix: `read the output of a node that runs before ${quote(node)}, or route ${quote(r.name)} before it`,
    };
  }

  private bare(r: TemplateRef, at: string): Omit<ValidationProblem, 'path'> {
    const severity = r.soft ? 'warning' : undefined;
    const isCtx =
      this.always.has(r.name) || this.savers.has(r.name) || ['item', 'index', 'iteration'].includes(r.name);
    if (isCtx)
      return {
        severity,
        message: `${quote(r.name)} ${at} is not a template variable: ctx variables are read as ctx.${r.name}`,
        fix: `write {{ ctx.${r.name} }}`,
      };
    if (this.flow.index.has(r.name))
      return {
        severity,
        message: `${quote(r.name)} ${at} is not a template variable: node outputs are read as out.${r.name}`,
        fix: `write {{ out.${r.name} }}`,
      };
    const hint = this.hint(r.name, () => [...this.always, ...this.savers.keys()]);
    return {
      severity,
      message: `${quote(r.name)} ${at} is not a template variable${hint ? `${hint.replace('did you mean "', 'did you mean "ctx.')}` : ''}: templates read ctx.<name> (inputs, files, save_output, input), out.<node> and fread(path)`,
      fix: 'set it with {% set %} first, or read it from ctx or out',
    };
  }

  /** "Did you mean" searches left: each scans every name, so a file with thousands of problems gets a few. */
  private hintsLeft = 50;
  /** Every node name, listed once for all "names no node" problems. */
  private nodeNames: string[] | undefined;
  private hint(word: string, names: () => Iterable<string>): string {
    return this.hintsLeft-- > 0 ? didYouMean(word, [...names()]) : '';
  }

  /** Nodes of the chains that parallel branches and maps run in child scopes. */
  private fanOut: Uint8Array | undefined;
  private fanOutChains(): Uint8Array {
    this.fanOut ??= this.flow.reach(
      this.flow.starts.flatMap((ss) =>
        ss.filter((s) => s.how === 'branch' || s.how === 'map').map((s) => s.target),
      ),
      false,
    );
    return this.fanOut;
  }

  /** True when `target` can run after `from` (bounded: only the first few problems search). */
  private runsLater(from: number, target: number): boolean {
    if (this.laterChecks-- <= 0) return false;
    const after = [...this.flow.succ[from]!, ...this.flow.starts[from]!.map((s) => s.target)];
    return this.flow.reach(after, true)[target] === 1;
  }
}
