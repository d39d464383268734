/**
 * Issue 36, point 10: every text the built CLI prints is redacted of the secrets of its environment and
 * stripped of terminal control sequences, whoever wrote it (a script's stderr or output, a model's
 * reply, an MCP server's stderr, the journal) and whatever the form (plain, -q, --verbose, --events,
 * --json, runs show, validate --connect).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printable } from '../../src/cli/print.js';
import { FakeOpenAI } from '../fakes/fake-openai.js';
import { runCli, seededRandom, tempDir } from '../helpers.js';

const TOKEN = 'ghp_0123456789abcdefghijKLMNOPQRSTUV';
/** OSC 52 (writes the clipboard), CSI clear screen + cursor home, RIS (resets the terminal), 8-bit CSI. */
const NASTY = '\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[H\x1bc\u009b2J';
/** The token split by a colour code: once the code is stripped, the whole token is there again. */
const SPLIT = `${TOKEN.slice(0, 14)}\x1b[0m${TOKEN.slice(14)}`;

/** Asserts that no form of the token and no control character but newline and tab was printed. */
function expectClean(label: string, ...texts: string[]) {
  for (const text of texts) {
    expect(text, label).not.toContain(TOKEN.slice(0, 14));
    expect(text, label).not.toContain(TOKEN.slice(14));
    expect(text, label).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  }
}

/**
 * A script that prints the token it was given (argv or environment), bare and split, and the escape
 * sequences, on stdout and stderr; with `fail` it exits 1.
 */
const SCRIPT = `
const t = process.argv[2] || process.env.GITHUB_TOKEN;
const split = t.slice(0, 14) + '\\x1b[0m' + t.slice(14);
const nasty = ${JSON.stringify(NASTY)};
process.stdout.write('out ' + t + ' ' + split + nasty + '\\n');
process.stderr.write('err ' + t + ' ' + split + nasty + '\\n');
if (process.argv.includes('fail')) process.exit(1);
`;

let dir: string;
let state: string;
const env = () => ({ GITHUB_TOKEN: TOKEN, HATCHERY_STATE: state });

/** A hatchery of one script node running SCRIPT with `args`, the token passed in its env. */
function scriptFile(name: string, args: string[]): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      name,
      desc: 'prints a token and escapes',
      nodes: [
        {
          name: 'Leak',
          type: 'script',
          cmd: [process.execPath, path.join(dir, 'leak.cjs'), ...args],
          env: { GITHUB_TOKEN: `\${GITHUB_TOKEN}` },
        },
      ],
    }),
  );
  return file;
}

beforeAll(() => {
  dir = tempDir('cli-output-');
  state = path.join(dir, 'state');
  writeFileSync(path.join(dir, 'leak.cjs'), SCRIPT);
});

describe('run', () => {
  it('never prints a script stderr secret or its escapes on the error line, in any view', async () => {
    const file = scriptFile('fails', ['', 'fail']);
    for (const mode of [[], ['-q'], ['--verbose'], ['--events'], ['--json']]) {
      const r = await runCli(['run', file, '--input', 'x', ...mode], { env: env(), cwd: dir });
      expect(r.code, r.stderr).toBe(1);
      // The failure is reported, with the script's stderr, only cleaned.
      expect(`${r.stdout}${r.stderr}`).toContain('err [redacted] [redacted]');
      expectClean(`run ${mode.join(' ')}`, r.stdout, r.stderr);
    }
  });

  it('never prints them in the output of a script that succeeds, plain or --json', async () => {
    const file = scriptFile('works', []);
    for (const mode of [[], ['--verbose'], ['--json']]) {
      const r = await runCli(['run', file, '--input', 'x', ...mode], { env: env(), cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('out [redacted] [redacted]');
      expectClean(`run ${mode.join(' ')}`, r.stdout, r.stderr);
    }
  });

  describe('a model reply', () => {
    const openai = new FakeOpenAI();
    beforeAll(async () => {
      await openai.start();
    });
    afterAll(() => openai.close());

    it('holding the token and escape sequences reaches neither stdout nor stderr raw', async () => {
      const file = path.join(dir, 'model.json');
      writeFileSync(
        file,
        JSON.stringify({
          name: 'model',
          desc: 'answers',
          model: 'openai:gpt-4o-mini',
          nodes: [{ name: 'Answer', usr_prompt: '{{ ctx.input }}' }],
        }),
      );
      const modelEnv = {
        ...env(),
        OPENAI_API_KEY: 'sk-test-cli-output-key',
        OPENAI_BASE_URL: openai.baseURL,
      };
      for (const mode of [[], ['--verbose'], ['--json']]) {
        openai.enqueue({ text: `here: ${TOKEN} ${SPLIT}${NASTY} done` });
        const r = await runCli(['run', file, '--input', 'x', ...mode], { env: modelEnv, cwd: dir });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('here: [redacted] [redacted]');
        expectClean(`model ${mode.join(' ')}`, r.stdout, r.stderr);
      }
    });
  });
});

describe('runs show', () => {
  it('cleans what the journal holds: a token the run did not know of, and escapes', async () => {
    // The run's process has no GITHUB_TOKEN: its journal keeps the literal value the script printed.
    const own = path.join(dir, 'show-state');
    for (const [name, args] of [
      ['shown_ok', [TOKEN]],
      ['shown_failed', [TOKEN, 'fail']],
    ] as const) {
      const file = scriptFile(name, [...args]);
      await runCli(['run', file, '--input', 'x', '-q'], { env: { HATCHERY_STATE: own }, cwd: dir });
    }
    const list = await runCli(['runs', 'list', '--json'], { env: { HATCHERY_STATE: own }, cwd: dir });
    const ids = (JSON.parse(list.stdout) as { id: string }[]).map((s) => s.id);
    expect(ids).toHaveLength(2);
    // The attack is real: without the variable in its environment, runs show has no way to know the value.
    const blind = await runCli(['runs', 'show', ids[0]!], { env: { HATCHERY_STATE: own }, cwd: dir });
    expect(blind.stdout).toContain(TOKEN);
    for (const id of ids) {
      for (const mode of [[], ['--json']]) {
        const r = await runCli(['runs', 'show', id, ...mode], {
          env: { GITHUB_TOKEN: TOKEN, HATCHERY_STATE: own },
          cwd: dir,
        });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('[redacted]');
        expectClean(`runs show ${mode.join(' ')}`, r.stdout, r.stderr);
      }
    }
  });
});

describe('validate --connect', () => {
  it('cleans the stderr of an MCP server that fails, in text and --json', async () => {
    const file = path.join(dir, 'connect.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'connect',
        desc: 'uses a server that dies printing its token',
        mcpServers: {
          bad: {
            command: process.execPath,
            args: [path.join(dir, 'leak.cjs'), '', 'fail'],
            env: { GITHUB_TOKEN: `\${GITHUB_TOKEN}` },
          },
        },
        nodes: [{ name: 'A', type: 'tool', tool_name: 'mcp:bad/echo', tool_args: { text: 'x' } }],
      }),
    );
    for (const mode of [[], ['--json']]) {
      const r = await runCli(['validate', file, '--connect', ...mode], { env: env(), cwd: dir });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout).toContain('err [redacted] [redacted]');
      expectClean(`validate --connect ${mode.join(' ')}`, r.stdout, r.stderr);
    }
  });

  it('redacts a server stderr before keeping its tail, so the cut never keeps half a token', async () => {
    const file = path.join(dir, 'connect-tail.json');
    // The error keeps the last 800 characters: cutting before redacting kept the token's last 10.
    const code = `process.stderr.write(process.env.GITHUB_TOKEN + 'x'.repeat(790)); process.exit(1)`;
    writeFileSync(
      file,
      JSON.stringify({
        name: 'connect-tail',
        desc: 'uses a server whose stderr tail starts inside its token',
        mcpServers: {
          bad: { command: process.execPath, args: ['-e', code], env: { GITHUB_TOKEN: `\${GITHUB_TOKEN}` } },
        },
        nodes: [{ name: 'A', type: 'tool', tool_name: 'mcp:bad/echo', tool_args: { text: 'x' } }],
      }),
    );
    const r = await runCli(['validate', file, '--connect'], { env: env(), cwd: dir });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('xxxxxxxx');
    expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN.slice(-10));
    expectClean('validate --connect', r.stdout, r.stderr);
  });
});

describe('printable', () => {
  it('leaves no control character but newline and tab, whatever pieces of sequences a text mixes', () => {
    const pieces = [
      '\x1b',
      '[',
      ']',
      'P',
      '\\',
      '\x07',
      '\u009b',
      '\u009d',
      '\u009c',
      '52;c;',
      '2J',
      '0m',
      'a',
      '\n',
      '\t',
      '\r',
      '\x00',
      '\x7f',
      TOKEN.slice(0, 9),
      ';',
    ];
    const random = seededRandom(36);
    for (let i = 0; i < 5000; i++) {
      let text = '';
      for (let n = Math.floor(random() * 24); n > 0; n--)
        text += pieces[Math.floor(random() * pieces.length)];
      expect(printable(text), JSON.stringify(text)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
  });
});
