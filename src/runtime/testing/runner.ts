import { formatError } from '../../core/errors.js';
import type { RunEvent } from '../../engine/contracts.js';
import { Cassette } from '../cassette/cassette.js';
import { Runtime, type RuntimeOptions } from '../runtime.js';
import { check, type Outcome } from './expect.js';
import type { LoadedTestFile } from './load.js';

/** The result of one case. */
export interface CaseResult {
  name: string;
  passed: boolean;
  /** What differed, one line each (empty when passed). */
  failures: string[];
  ms: number;
}

/** How test files run. */
export interface TestRunOptions {
  /** Runtime options of every case (the CLI's --allow-root, --mcp-config...); each case gets its own Runtime. */
  runtime?: RuntimeOptions;
  /** Calls missing from a case's cassette are made for real and appended (test --record-missing). */
  recordMissing?: boolean;
  /** Called as each case ends, so results print while the next case runs. */
  onCase?: (result: CaseResult) => void;
}

/**
 * Runs every case of a test file, one after the other, each in its own Runtime with its own cassette
 * (replayed: no network, no API key), and checks its expectations.
 */
export async function runTestFile(t: LoadedTestFile, options: TestRunOptions = {}): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const [i, c] of t.def.cases.entries()) {
    const t0 = performance.now();
    const outcome = await runCase(t, i, options);
    const failures = check(c.expect, outcome);
    const result = { name: c.name, passed: failures.length === 0, failures, ms: performance.now() - t0 };
    results.push(result);
    options.onCase?.(result);
  }
  return results;
}

async function runCase(t: LoadedTestFile, i: number, options: TestRunOptions): Promise<Outcome> {
  const c = t.def.cases[i]!;
  const file = t.cassettes[i];
  const nodes: string[] = [];
  let runtime: Runtime | undefined;
  try {
    const cassette = file
      ? await Cassette.open({ file, mode: 'replay', recordMissing: options.recordMissing })
      : undefined;
    runtime = new Runtime({ ...options.runtime, ...(cassette ? { cassette } : {}) });
    const h = await runtime.load(t.hatchery);
    const result = await runtime.run(h, {
      input: c.input,
      vars: c.vars,
      onEvent: (e: RunEvent) => {
        if (e.type === 'node_start' && e.depth === 0) nodes.push(e.node);
      },
    });
    return {
      output: result.output,
      value: result.value,
      nodes,
      tokens: result.usage.inputTokens + result.usage.outputTokens,
    };
  } catch (err) {
    return { error: formatError(err), nodes, tokens: 0 };
  } finally {
    await runtime?.close();
  }
}
