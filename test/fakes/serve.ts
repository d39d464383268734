/**
 * Starts both fake vendor servers for other processes (CLI tests, benchmarks) and prints one JSON line:
 * `{"openai":"http://127.0.0.1:P/v1","anthropic":"http://127.0.0.1:Q","pid":N}`; the values are the SDK
 * base URLs (OPENAI_BASE_URL / ANTHROPIC_BASE_URL). Runs until SIGINT/SIGTERM (or, with
 * `--exit-on-stdin-close`, until its stdin pipe closes, so it never outlives a parent that crashed).
 *
 * Usage: tsx test/fakes/serve.ts [--openai-port N] [--anthropic-port N] [--latency-ms N] [--exit-on-stdin-close]
 * Replies are the default echo unless queued with `POST <url>/_fake/replies` (a JSON array).
 */
import { FakeAnthropic } from './fake-anthropic.js';
import { FakeOpenAI } from './fake-openai.js';

function flag(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`serve.ts: ${name} needs a non-negative integer\n`);
    process.exit(2);
  }
  return value;
}

const latencyMs = flag('--latency-ms');
const openai = new FakeOpenAI({ latencyMs, port: flag('--openai-port') });
const anthropic = new FakeAnthropic({ latencyMs, port: flag('--anthropic-port') });
await openai.start();
await anthropic.start();
process.stdout.write(
  `${JSON.stringify({ openai: openai.baseURL, anthropic: anthropic.baseURL, pid: process.pid })}\n`,
);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all([openai.close(), anthropic.close()]);
  process.exit(0);
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
// Opt-in: a plain `serve.ts &` from a shell has stdin at EOF and would stop at once.
if (process.argv.includes('--exit-on-stdin-close')) {
  process.stdin.on('end', stop);
  process.stdin.resume();
}
