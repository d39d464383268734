/**
 * Telemetry that is off costs nothing and telemetry that is on never costs a run: without an endpoint
 * no OpenTelemetry module is even resolved (the packages are made unresolvable and the run still
 * works); an endpoint that refuses connections or hangs does not fail the run nor keep the CLI from
 * exiting; `serve` flushes its spans when stopped with SIGTERM; OTEL_SDK_DISABLED, OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES are honoured.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_PATH, echo, REPO_ROOT, runCli, TEST_STATE, tempDir } from '../helpers.js';
import { spawnCli, textOf, waitFor } from '../mcp/helpers.js';
import { OtlpReceiver } from './otlp-receiver.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function receiver(mode: 'ok' | 'hang' = 'ok'): Promise<OtlpReceiver> {
  const r = await new OtlpReceiver(mode).start();
  cleanups.push(() => r.close());
  return r;
}

/** A folder with a hatchery that runs one echo node (no model). */
function echoFile(): { dir: string; file: string } {
  const dir = tempDir('otel-life-');
  const file = path.join(dir, 'hello.json');
  writeFileSync(
    file,
    JSON.stringify({ name: 'hello', desc: 'echoes', nodes: [echo('Say', 'said {{ ctx.input }}')] }),
  );
  return { dir, file };
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** The built CLI under `node --import <preload>`, in a clean environment. */
function runWithPreload(preload: string, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', pathToFileURL(preload).href, CLI_PATH, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HATCHERY_STATE: TEST_STATE, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('telemetry off costs nothing', () => {
  it('without an endpoint no @opentelemetry module is resolved: the run works with them unresolvable', async () => {
    const { file } = echoFile();
    const dir = tempDir('otel-block-');
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/')) throw new Error('blocked import of ' + specifier);
  return next(specifier, context);
}\n`,
    );
    const preload = path.join(dir, 'block.mjs');
    writeFileSync(
      preload,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );

    const off = await runWithPreload(preload, ['run', file, '--input', 'x'], {});
    expect(off).toMatchObject({ code: 0, stdout: 'said x\n' });
    expect(off.stderr).not.toMatch(/blocked|OpenTelemetry/);

    // The control: with an endpoint the same hook does block the import, and the run still works.
    const on = await runWithPreload(preload, ['run', file, '--input', 'x'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(on).toMatchObject({ code: 0, stdout: 'said x\n' });
    expect(on.stderr).toMatch(
      /OpenTelemetry traces are off: their setup failed \(blocked import of @opentelemetry\//,
    );
  });

  it('OTEL_SDK_DISABLED=true turns traces off even with an endpoint', async () => {
    const r = await receiver();
    const { file } = echoFile();
    const out = await runCli(['run', file, '--input', 'x'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_SDK_DISABLED: 'true' },
    });
    expect(out.code).toBe(0);
    expect(r.requests).toEqual([]);
  });
});

describe('telemetry on never costs the run', () => {
  it('honours OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and a signal-specific endpoint', async () => {
    const r = await receiver();
    const { file } = echoFile();
    const out = await runCli(['run', file, '--input', 'x'], {
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${r.url}/custom/path`,
        OTEL_SERVICE_NAME: 'my-agents',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      },
    });
    expect(out.code).toBe(0);
    expect(r.requests.map((q) => q.path)).toEqual(['/custom/path']);
    const run = r.one('invoke_workflow hello');
    expect(run.resource).toMatchObject({ 'service.name': 'my-agents', 'deployment.environment': 'test' });
    expect(r.byId(r.one('execute_tool echo').parentSpanId)?.attributes['hatchery.node.kind']).toBeDefined();
  });

  it('an endpoint that refuses connections: the run succeeds and the CLI exits', async () => {
    const { file } = echoFile();
    const out = await runCli(['run', file, '--input', 'x'], {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      },
    });
    expect(out).toMatchObject({ code: 0, stdout: 'said x\n' });
    // Said once, so a user whose traces never arrive (or whose run waits at exit) learns why.
    const warnings = out.stderr.split('\n').filter((l) => l.includes('could not be exported'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/HATCHERY_OTEL.*check OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('an endpoint that never answers: the run succeeds and the CLI exits after the exporter timeout', async () => {
    const r = await receiver('hang');
    const { file } = echoFile();
    const out = await runCli(['run', file, '--input', 'x'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' },
    });
    expect(out).toMatchObject({ code: 0, stdout: 'said x\n' });
    // The export was tried (and abandoned), not skipped.
    expect(r.requests.length).toBeGreaterThan(0);
  });

  it('serve flushes the spans of its runs when stopped with SIGTERM', async () => {
    const r = await receiver();
    const { dir } = echoFile();
    // A batch delay of ten minutes: only the shutdown flush can deliver these spans.
    const served = await spawnCli(dir, {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_BSP_SCHEDULE_DELAY: '600000' },
    });
    cleanups.push(() => served.close().catch(() => undefined));
    const res = await served.client.callTool({ name: 'hello', arguments: { input: 'y' } });
    expect(textOf(res)).toBe('said y');
    expect(r.spans).toEqual([]);
    process.kill(served.transport.pid!, 'SIGTERM');
    await waitFor(() => r.spans.some((s) => s.name === 'invoke_workflow hello'), 10_000, 'the flushed spans');
  });
});
