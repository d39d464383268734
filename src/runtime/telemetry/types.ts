/** The shapes telemetry is used through (index.ts) and built with (otel.ts). */
import type { RunListener } from '../../engine/contracts.js';

/** Traces of a runtime's runs: one listener per top-level run, and a flush before the process ends. */
export interface Telemetry {
  /** A fresh listener for one top-level run (its nested runs share it). */
  listener(): RunListener;
  /** Exports what is buffered and stops the exporter; waits at most the exporter's timeout. */
  close(): Promise<void>;
}

/** An environment as the runtime sees it. */
export type Env = Readonly<Record<string, string | undefined>>;
