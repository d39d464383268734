import type { RunContext } from '../engine/contracts.js';
import type { Usage } from '../providers/types.js';
import type { RunResult } from './options.js';

/**
 * The result of a finished run, with `outputs` built from the run's scope on its first read (most
 * callers never read it, and in a large file building the dictionary is most of what a node costs
 * more, engine/out-slots.ts).
 *
 * A class whose accessor is one pair of functions shared by every result, not an object literal with
 * `get outputs()`: V8 kept the literal's getter closure, and through it the run's whole scope, alive
 * until the next young collection, whatever had become of the result (~40 bytes a node of every run
 * in between survived it and was copied to the old generation).
 */
export class FinishedRun implements RunResult {
  readonly runId: string;
  readonly output: string;
  readonly value: unknown;
  readonly usage: Usage;
  readonly steps: number;
  declare outputs: Record<string, unknown>;
  #from: RunContext | undefined;
  #outputs: Record<string, unknown> | undefined = undefined;

  constructor(runId: string, output: string, value: unknown, usage: Usage, steps: number, from: RunContext) {
    this.runId = runId;
    this.output = output;
    this.value = value;
    this.usage = usage;
    this.steps = steps;
    this.#from = from;
    // An own, enumerable property as before (JSON.stringify and spreads list it), after the others.
    Object.defineProperty(this, 'outputs', FinishedRun.OUTPUTS);
  }

  /** The one descriptor of every result's `outputs`. */
  private static readonly OUTPUTS: PropertyDescriptor = {
    get(this: FinishedRun): Record<string, unknown> {
      const from = this.#from;
      if (from !== undefined) {
        this.#outputs = from.out;
        this.#from = undefined;
      }
      return this.#outputs!;
    },
    set(this: FinishedRun, v: Record<string, unknown>): void {
      this.#from = undefined;
      this.#outputs = v;
    },
    enumerable: true,
    configurable: true,
  };
}
