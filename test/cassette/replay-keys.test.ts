/**
 * A replay needs no API key and is the same whatever the shell holds: run --replay and --replay-run
 * through the built CLI with no key, with only the other vendor's key (a CI set-up), and with another
 * HATCHERY_MODEL; --replay-run takes the past run's inputs from its journal unless given new ones.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { runCli, tempDir } from '../helpers.js';

const { openai, anthropic } = fakeVendors();

/** Names no model: the key set when it was recorded chose it (OpenAI's default). */
const story = {
  name: 'story',
  desc: 'Tells a story',
  inputs: { tone: 'Which tone?' },
  nodes: [{ name: 'Tell', usr_prompt: 'Tell a {{ ctx.tone }} story about {{ ctx.input }}' }],
};

let dir: string;
let state: string;
let file: string;
let cassette: string;
let runId: string;

const cli = (args: string[], env: Record<string, string>) =>
  runCli([...args, '--state', state], { cwd: dir, env });

/** Shells a replay may run in; every base URL is a fake that counts what reaches it. */
const shells = (): Record<string, Record<string, string>> => ({
  'no key': { OPENAI_BASE_URL: openai.baseURL, ANTHROPIC_BASE_URL: anthropic.baseURL },
  'only the other vendor key': {
    ANTHROPIC_API_KEY: 'sk-ant-ci-123456',
    ANTHROPIC_BASE_URL: anthropic.baseURL,
  },
  'another HATCHERY_MODEL and both keys': {
    HATCHERY_MODEL: 'anthropic:claude-other-1',
    OPENAI_API_KEY: 'sk-shell-openai-123456',
    ANTHROPIC_API_KEY: 'sk-ant-shell-123456',
    OPENAI_BASE_URL: openai.baseURL,
    ANTHROPIC_BASE_URL: anthropic.baseURL,
  },
});

beforeEach(async () => {
  dir = tempDir('hatchery-replay-keys-');
  state = path.join(dir, 'state');
  file = path.join(dir, 'story.json');
  cassette = path.join(dir, 'story.jsonl');
  writeFileSync(file, JSON.stringify(story));
  openai.reset();
  anthropic.reset();
  openai.enqueue('Once, a cheerful lighthouse keeper...');
  const rec = await cli(
    ['run', file, '--input', 'a lighthouse', '--set', 'tone=cheerful', '--record', cassette, '-q'],
    { OPENAI_API_KEY: 'sk-recording-123456', OPENAI_BASE_URL: openai.baseURL },
  );
  expect(rec).toMatchObject({ code: 0, stdout: 'Once, a cheerful lighthouse keeper...\n' });
  const runs = JSON.parse((await cli(['runs', 'list', '--json'], {})).stdout) as { id: string }[];
  runId = runs[0]!.id;
  openai.reset();
});

describe('replay without the recording key', () => {
  it.each(['no key', 'only the other vendor key', 'another HATCHERY_MODEL and both keys'])(
    '--replay and --replay-run answer the same with %s',
    async (shell) => {
      const env = shells()[shell]!;
      const replay = await cli(
        ['run', file, '--input', 'a lighthouse', '--set', 'tone=cheerful', '--replay', cassette, '-q'],
        env,
      );
      expect(replay).toMatchObject({
        code: 0,
        stdout: 'Once, a cheerful lighthouse keeper...\n',
        stderr: '',
      });
      // No --input, no --set: the past run's come from its journal.
      const again = await cli(['run', file, '--replay-run', runId.slice(0, 8), '-q'], env);
      expect(again).toMatchObject({ code: 0, stdout: 'Once, a cheerful lighthouse keeper...\n', stderr: '' });
      expect(openai.requests).toHaveLength(0);
      expect(anthropic.requests).toHaveLength(0);
    },
  );
});

describe('run --replay-run inputs', () => {
  it("uses a given --input or --set instead of the past run's: the replay then lacks that call", async () => {
    const input = await cli(['run', file, '--replay-run', runId, '--input', 'a harbour', '-q'], {});
    expect(input.code).toBe(1);
    expect(input.stderr).toContain(
      `no recorded answer for this model call of node "Tell" in the journal of run ${runId}`,
    );
    expect(input.stderr).toContain('+       "content": "Tell a cheerful story about a harbour"');
    const tone = await cli(['run', file, '--replay-run', runId, '--set', 'tone=grim', '-q'], {});
    expect(tone.code).toBe(1);
    expect(tone.stderr).toContain('+       "content": "Tell a grim story about a lighthouse"');
    expect(openai.requests).toHaveLength(0);
  });

  it("reads a new input from stdin when one is piped, and the journal's when stdin is empty", async () => {
    const piped = await runCli(['run', file, '--replay-run', runId, '--state', state, '-q'], {
      cwd: dir,
      stdin: 'a harbour\n',
    });
    expect(piped.code).toBe(1);
    expect(piped.stderr).toContain('a harbour');
    const empty = await runCli(['run', file, '--replay-run', runId, '--state', state, '-q'], {
      cwd: dir,
      stdin: '',
    });
    expect(empty).toMatchObject({ code: 0, stdout: 'Once, a cheerful lighthouse keeper...\n' });
  });
});
