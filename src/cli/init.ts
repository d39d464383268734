import { lstat, mkdir, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HatcheryError } from '../core/errors.js';
import { shellQuote } from '../core/shell.js';
import { VENDORS } from '../providers/vendors.js';
import { EXIT, parseCommand } from './args.js';
import { CLI_JS, clientConfigText, INSTALL_ROOT } from './client-config.js';
import { HATCHERYIGNORE, HELLO_QUESTION, helloCassette, helloJson, helloTestYaml } from './init-template.js';
import { printOut } from './print.js';
import { findCommand } from './which.js';

/** Help text of `hatchery-mcp init`. */
export const INIT_HELP = `Usage: hatchery-mcp init [DIR] [--force]

Creates DIR (default ./hatchery) with a first hatchery and its test, then prints the config block
of each MCP client (Claude Desktop, VS Code, Cursor, Claude Code) with this machine's paths. Run it
again to see the blocks again: files already there are kept (and listed), never overwritten:
  DIR/hello.json                  the hatchery: tool "hello", one model call
  DIR/tests/hello.test.yaml       its test (hatchery-mcp test DIR/tests)
  DIR/tests/cassettes/hello.jsonl the recorded answer the test replays (no API key needed)
  DIR/.hatcheryignore             keeps tests/ out of the served tools

Options:
  --force     overwrite these files when they exist (other files of DIR are never touched)
  -h, --help  show this help`;

/** The lstat of a path, or undefined when nothing is there. */
function lstatOrNone(p: string) {
  return lstat(p).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
}

/**
 * Refuses what would write anything but a plain file inside DIR: DIR or a sub-folder that is a file
 * or a symbolic link (which could lead outside DIR), and a target that is a link or a folder.
 * Everything is checked before the first write. Returns the files that exist already as plain files:
 * kept unless `force`.
 */
async function check(dir: string, files: readonly { rel: string }[], force: boolean): Promise<Set<string>> {
  // DIR itself may be a link to a folder (macOS's /tmp is one); the folders below it may not.
  const dirStat = await stat(dir).catch(() => undefined);
  if (dirStat && !dirStat.isDirectory()) {
    throw new HatcheryError(
      'FILE_IO',
      `${dir} exists and is not a folder; give init another DIR (hatchery-mcp init my-hatchery)`,
      { file: dir },
    );
  }
  const folders = new Set(files.map((f) => path.dirname(f.rel)).filter((d) => d !== '.'));
  for (const rel of [...folders].flatMap((d) => [path.dirname(d), d]).filter((d) => d !== '.')) {
    const s = await lstatOrNone(path.join(dir, rel));
    if (s && !s.isDirectory()) {
      throw new HatcheryError(
        'FILE_IO',
        `${path.join(dir, rel)} exists and is not a folder (init writes only plain files inside ${dir}); move it away or give init another DIR`,
        { file: path.join(dir, rel) },
      );
    }
  }
  const kept = new Set<string>();
  for (const f of files) {
    const target = path.join(dir, f.rel);
    const s = await lstatOrNone(target);
    if (!s) continue;
    if (!s.isFile()) {
      throw new HatcheryError(
        'FILE_IO',
        `${target} exists and is not a plain file${s.isSymbolicLink() ? ' (a symbolic link)' : ''}; init does not replace it, even with --force: move it away or give init another DIR`,
        { file: target },
      );
    }
    if (!force) kept.add(f.rel);
  }
  return kept;
}

/**
 * Creates the folder and the files it lacks (paths relative to DIR); returns the absolute paths it
 * wrote and those it kept. A file already there is kept as it is (the user may have edited it;
 * running init again is how the client config blocks are shown again) unless `force`.
 */
async function initFolder(dirArg: string, force: boolean): Promise<{ written: string[]; kept: string[] }> {
  const dir = path.resolve(dirArg);
  const files = [
    { rel: 'hello.json', text: helloJson() },
    { rel: path.join('tests', 'hello.test.yaml'), text: helloTestYaml() },
    { rel: path.join('tests', 'cassettes', 'hello.jsonl'), text: helloCassette() },
    { rel: '.hatcheryignore', text: HATCHERYIGNORE },
  ];
  const keep = await check(dir, files, force);
  await mkdir(path.join(dir, 'tests', 'cassettes'), { recursive: true });
  // The folders were checked above; this catches one swapped for a link meanwhile.
  const real = await realpath(dir);
  const realCassettes = await realpath(path.join(dir, 'tests', 'cassettes'));
  if (realCassettes !== path.join(real, 'tests', 'cassettes')) {
    throw new HatcheryError('FILE_IO', `${dir}/tests/cassettes does not lead to a folder inside ${dir}`, {
      file: dir,
    });
  }
  const written: string[] = [];
  const kept: string[] = [];
  for (const f of files) {
    const target = path.join(dir, f.rel);
    if (keep.has(f.rel)) {
      kept.push(target);
      continue;
    }
    try {
      // "wx" never follows or replaces anything unless --force was given for plain files checked above.
      await writeFile(target, f.text, { flag: force ? 'w' : 'wx' });
      written.push(target);
    } catch (err) {
      // Created meanwhile (by the user, or another init): kept, like a file found by the check.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      kept.push(target);
    }
  }
  return { written, kept };
}

/** The lines saying what init wrote and what it kept. */
function report(dir: string, { written, kept }: Awaited<ReturnType<typeof initFolder>>): string {
  const list = (files: string[]) => files.map((f) => `  ${path.relative(dir, f)}`).join('\n');
  const parts: string[] = [];
  if (written.length > 0) parts.push(`Created in ${dir}:\n${list(written)}`);
  if (kept.length > 0) {
    parts.push(
      `Kept in ${dir} (already there, not overwritten; --force replaces them with init's versions):\n${list(kept)}`,
    );
  }
  return parts.join('\n');
}

/**
 * How the next steps call this program: `hatchery-mcp` when that is on PATH, else node and this
 * install's cli.js (a clone used with `node dist/cli.js`, before `npm install -g .`).
 */
async function cliWord(): Promise<{ word: string; note: string }> {
  if (await findCommand('hatchery-mcp', process.cwd())) return { word: 'hatchery-mcp', note: '' };
  return {
    word: `node ${shellQuote(CLI_JS)}`,
    note: `\n  ("hatchery-mcp" is not on your PATH: "npm install -g ." in ${shellQuote(INSTALL_ROOT)} puts it there.)`,
  };
}

/** `hatchery-mcp init [DIR] [--force]`: returns the exit code. */
export async function initCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'init', INIT_HELP, {
    force: { type: 'boolean' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  if (positionals.length > 1) {
    throw new HatcheryError(
      'USAGE',
      `init takes one folder, got ${positionals.length}: ${positionals.join(', ')}\n\n${INIT_HELP}`,
    );
  }
  const dirArg = positionals[0] ?? 'hatchery';
  const result = await initFolder(dirArg, values.force === true);
  const dir = path.resolve(dirArg);
  const shown = shellQuote(dirArg);
  const cli = await cliWord();
  const [first, ...others] = VENDORS.map((v) => `${v.keyVar}=...`);
  const setKey = `export ${first}   (or ${others.join(' or ')})`;
  const q = (rel: string) => shellQuote(path.join(dirArg, rel));
  printOut(`${report(dir, result)}

${clientConfigText(dir)}

Next steps:
  1. Set a key: ${setKey}
  2. Run it:    ${cli.word} run ${q('hello.json')} --input ${shellQuote(HELLO_QUESTION)}
  3. Test it:   ${cli.word} test ${q('tests')}   (replays the cassette: no key, no network)
  4. Check all: ${cli.word} doctor --dir ${shown}
  Then add your own hatcheries to ${dir}: every *.json or *.yaml file there is one tool.${cli.note}
`);
  return EXIT.OK;
}
