/**
 * The OpenTelemetry side of telemetry (imported only when an endpoint is set, see index.ts): a tracer
 * provider of its own (never registered globally: the host's instrumentation is not ours to change),
 * a batch processor and the OTLP/HTTP JSON exporter. The exporter reads its own variables (endpoint,
 * headers, timeout, compression, certificates) from process.env; a runtime given another environment
 * passes its endpoint and headers explicitly.
 */
import { ExportResultCode, parseKeyPairsIntoRecord, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { packageVersion } from '../../core/package.js';
import { redactText, secretValues } from '../../core/secrets.js';
import { RunTracer } from './run-tracer.js';
import type { Env, Telemetry } from './types.js';

/** service.name when OTEL_SERVICE_NAME does not say. */
export const DEFAULT_SERVICE_NAME = 'hatchery-mcp';

/** Builds the telemetry of `env` (see telemetryFromEnv, which alone calls this). */
export function createTelemetry(env: Env): Telemetry {
  // envDetector reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (process.env) and wins the merge.
  let resource = resourceFromAttributes({
    'service.name': DEFAULT_SERVICE_NAME,
    'service.version': packageVersion(),
  }).merge(detectResources({ detectors: [envDetector] }));
  if (env !== process.env && env.OTEL_SERVICE_NAME) {
    resource = resource.merge(resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME }));
  }
  const exporter = new OTLPTraceExporter(env === process.env ? {} : exporterConfig(env));
  warnOnFailure(exporter, secretValues(env));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('hatchery-mcp', packageVersion());
  const options = {
    tracer,
    propagator: new W3CTraceContextPropagator(),
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
    secrets: secretValues(env),
  };
  let closed: Promise<void> | undefined;
  return {
    listener: () => new RunTracer(options).listener,
    close: () => {
      // shutdown() flushes first; a refused or hanging endpoint ends at the exporter's timeout.
      closed ??= provider.shutdown().catch(() => undefined);
      return closed;
    },
  };
}

/**
 * Says once, on stderr, that traces could not be exported (a collector that is down or refuses the
 * token), so a user whose spans never arrive, or whose `run` waits for the exporter's timeout at exit,
 * learns why. The exporter itself keeps silent unless the process-wide diagnostic logger is set.
 */
function warnOnFailure(exporter: OTLPTraceExporter, secrets: readonly string[]): void {
  const send = exporter.export.bind(exporter);
  let warned = false;
  exporter.export = (spans, done) =>
    send(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS && !warned) {
        warned = true;
        const why = redactText(result.error?.message ?? 'unknown error', secrets, { authHeaders: true });
        process.emitWarning(
          `OpenTelemetry traces could not be exported (${why}); check OTEL_EXPORTER_OTLP_ENDPOINT and its headers, or lower OTEL_EXPORTER_OTLP_TIMEOUT where no collector runs`,
          { code: 'HATCHERY_OTEL' },
        );
      }
      done(result);
    });
}

/**
 * Endpoint and headers of an environment that is not process.env, read as the exporter reads them:
 * a signal-specific endpoint as is, the generic one with `v1/traces` appended; headers `k=v,k2=v2`
 * (URL-encoded), the signal-specific ones overriding.
 */
function exporterConfig(env: Env): { url?: string; headers?: Record<string, string> } {
  const out: { url?: string; headers?: Record<string, string> } = {};
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const generic = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (specific) out.url = specific;
  else if (generic) out.url = `${generic.endsWith('/') ? generic : `${generic}/`}v1/traces`;
  const headers = {
    ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  };
  if (Object.keys(headers).length > 0) out.headers = headers;
  return out;
}
