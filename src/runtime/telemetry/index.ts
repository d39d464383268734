/**
 * OpenTelemetry traces of runs, switched on by the standard OTLP variables. This is the one module the
 * rest of the code imports: it decides from the environment alone whether tracing is on, and only then
 * imports the OpenTelemetry packages (./otel.ts), so a run without an endpoint loads none of them.
 */
import type { Env, Telemetry } from './types.js';

export type { Env, Telemetry } from './types.js';

/**
 * True when `env` asks for traces: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set and `OTEL_SDK_DISABLED` is not "true". Synchronous
 * and import-free, so a runtime can ask it before every run at no cost.
 */
export function telemetryEnabled(env: Env): boolean {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return false;
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/**
 * The telemetry `env` asks for, or undefined when it asks for none (see telemetryEnabled). A setup
 * that fails (a broken install) warns once and gives undefined: tracing never stops a run.
 */
export async function telemetryFromEnv(env: Env): Promise<Telemetry | undefined> {
  if (!telemetryEnabled(env)) return undefined;
  try {
    const { createTelemetry } = await import('./otel.js');
    return createTelemetry(env);
  } catch (err) {
    process.emitWarning(
      `OpenTelemetry traces are off: their setup failed (${err instanceof Error ? err.message : String(err)})`,
      { code: 'HATCHERY_OTEL' },
    );
    return undefined;
  }
}
