// Runs the MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against this
// server over Streamable HTTP, serving test/conformance/hatchery (hatcheries named after the suite's
// test tools), prints one line per scenario and exits 1 if a scenario that applies to this server
// fails. Used by `npm run conformance`, after `npm run build`.
//
// The suite needs Node 22 (it calls fs.globSync). On an older Node the script runs it with the
// Node 22 binary of the npm package `node@22`: `npm exec` installs both packages once into npm's
// own cache (~/.npm/_npx) and reuses them, so only the first run needs the npm registry.
//
// Usage: node scripts/conformance.mjs [--url URL] [--scenario NAME] [--verbose]
//   --url URL        test a server that is already running instead of starting one
//   --scenario NAME  run one scenario (default: the suite's active scenarios)
//   --verbose        print the suite's own output too
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const NODE22 = 'node@22';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const FOLDER = path.join(ROOT, 'test', 'conformance', 'hatchery');

/**
 * Scenarios that test features this server does not have, with the reason; docs/serving.md
 * ("Conformance") lists the same. They are run and shown, but their failure fails nothing.
 */
const NOT_APPLICABLE = {
  'completion-complete':
    'no prompts or resource templates, so nothing to complete (no completions capability)',
  'tools-call-image': "a hatchery's result is its output as text (and structuredContent), never an image",
  'tools-call-audio': "a hatchery's result is its output as text (and structuredContent), never audio",
  'tools-call-embedded-resource':
    "a hatchery's result is text; long outputs are resource_links, not embedded resources",
  'tools-call-mixed-content': "a hatchery's result is text, not image and embedded resource blocks",
  'tools-call-with-logging':
    'runs report their steps as progress notifications of the call, not as log messages (logging is deprecated in 2026-07-28)',
  'resources-read-text': "the resources are the hatcheries' (hatchery://...), not the suite's test:// ones",
  'resources-read-binary': 'the resources are hatchery files and flowcharts (text), none binary',
  'resources-templates-read': 'no resource templates',
  'resources-subscribe': 'no resource subscriptions (files are watched; clients get list_changed)',
  'resources-unsubscribe': 'no resource subscriptions',
  'prompts-list': 'no prompts',
  'prompts-get-simple': 'no prompts',
  'prompts-get-with-args': 'no prompts',
  'prompts-get-embedded-resource': 'no prompts',
  'prompts-get-with-image': 'no prompts',
};

function option(name) {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}
const verbose = process.argv.includes('--verbose');
const only = option('--scenario');

/** Starts the built CLI serving the conformance folder; resolves with its URL and a stop function. */
async function startServer(state) {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
  // No API keys: drones of the folder use the client's model (sampling), as the suite expects.
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--dir', FOLDER, '--http', '127.0.0.1:0', '--state', state],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir() },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr.on('data', (b) => {
    err += b;
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 20 s:\n${err}`)), 20_000);
    child.stderr.on('data', () => {
      const m = /listening on (http:\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (code ${code}) before listening:\n${err}`));
    });
  });
  return {
    url,
    log: () => err,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Runs the suite against `url`, saving each scenario's checks below `out`; resolves with its exit code and stderr. */
function runSuite(url, out) {
  const major = Number(process.versions.node.split('.')[0]);
  const packages = major >= 22 ? [SUITE] : [NODE22, SUITE];
  const args = ['exec', '--yes', ...packages.map((p) => `--package=${p}`), '--', 'conformance', 'server'];
  args.push('--url', url, '--output-dir', out, ...(only ? ['--scenario', only] : []));
  return new Promise((resolve, reject) => {
    // npm exec puts the packages' bins first on PATH: `conformance` then runs on node@22's `node`.
    const child = spawn('npm', args, {
      cwd: out,
      stdio: ['ignore', verbose ? 'inherit' : 'ignore', 'pipe'],
      shell: process.platform === 'win32',
    });
    // npm's engine warnings about the suite and Node 20 are noise; shown when nothing ran.
    let err = '';
    child.stderr.on('data', (b) => {
      if (verbose) process.stderr.write(b);
      else err += b;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? 1, err }));
  });
}

/** The checks of each scenario the suite ran, read from its result folders (server-<name>-<time>). */
function readResults(out) {
  const results = new Map();
  for (const entry of readdirSync(out)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const file = path.join(out, entry, 'checks.json');
    if (m && existsSync(file)) results.set(m[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return results;
}

const state = mkdtempSync(path.join(os.tmpdir(), 'hatchery-conformance-'));
const out = path.join(state, 'results');
let server;
let failed = 0;
try {
  const given = option('--url');
  server = given ? undefined : await startServer(path.join(state, 'runs'));
  const url = given ?? server.url;
  process.stdout.write(`Running ${SUITE} against ${url} (${FOLDER})\n\n`);
  mkdirSync(out, { recursive: true });
  const run = await runSuite(url, out);
  const results = readResults(out);
  if (results.size === 0)
    throw new Error(`the suite ran no scenario (npm exec exited with ${run.code}):\n${run.err}`);
  const width = Math.max(...[...results.keys()].map((k) => k.length));
  let passed = 0;
  let notApplicable = 0;
  for (const [name, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
    const bad = checks.filter((c) => c.status === 'FAILURE');
    const reason = NOT_APPLICABLE[name];
    let verdict;
    if (bad.length === 0) {
      verdict = 'pass';
      passed++;
    } else if (reason) {
      verdict = 'n/a ';
      notApplicable++;
    } else {
      verdict = 'FAIL';
      failed++;
    }
    const why =
      bad.length === 0 ? '' : reason ? reason : bad.map((c) => `${c.id}: ${c.errorMessage}`).join('; ');
    process.stdout.write(
      `${verdict}  ${name.padEnd(width)}  ${checks.length - bad.length}/${checks.length}  ${why}\n`,
    );
  }
  process.stdout.write(
    `\n${passed} passed, ${failed} failed, ${notApplicable} not applicable to this server (see docs/serving.md, "Conformance")\n`,
  );
} catch (err) {
  process.stderr.write(`conformance: ${err.message}\n`);
  failed = Math.max(failed, 1);
} finally {
  await server?.stop();
  if (failed && server) process.stderr.write(`server log:\n${server.log()}\n`);
  rmSync(state, { recursive: true, force: true });
}
process.exitCode = failed > 0 ? 1 : 0;
