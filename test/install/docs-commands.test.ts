/**
 * The commands the README and docs/ show exist as written: every `hatchery-mcp ...` or
 * `node dist/cli.js ...` line names a real command and only options that command's --help lists, and no
 * document sends users to `npx -y hatchery-mcp`, which fails with `npm error 404` until the package
 * is published.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers.js';
import { DOC_FILES, inlineCode, readDoc, splitFences } from './docs.js';

/** A documented command line: where it is and its words after the program. */
interface DocCommand {
  where: string;
  words: string[];
}

/** Splits a shell line into words (quotes kept together, comments and redirections dropped). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"[^"]*"|'[^']*'|[^\s"']+/g)) {
    const w = m[0];
    if (w.startsWith('#')) break;
    words.push(w);
  }
  const cut = words.findIndex((w) => /^(\d?>|>>|<|\|\||&&|\||;)/.test(w));
  return cut < 0 ? words : words.slice(0, cut);
}

/** The hatchery-mcp invocations of one piece of shell text (a fenced line or an inline span). */
function invocations(text: string, where: string): DocCommand[] {
  const out: DocCommand[] = [];
  for (const part of text.split(/&&|\|\||[|;]/)) {
    const m = /^\s*(?:\$\s+)?(?:hatchery-mcp|node dist\/cli\.js)(?=\s|$)(.*)$/.exec(part);
    if (m) out.push({ where, words: shellWords(m[1]!) });
  }
  return out;
}

/** Every documented invocation: shell and untyped fences (with indented continuation lines) and inline code. */
function documentedCommands(): DocCommand[] {
  const all: DocCommand[] = [];
  for (const file of DOC_FILES) {
    const { fences, prose } = splitFences(readDoc(file));
    for (const fence of fences) {
      if (!['', 'sh', 'shell', 'bash', 'console'].includes(fence.lang)) continue;
      fence.lines.forEach((line, i) => {
        let text = line;
        for (let j = i + 1; j < fence.lines.length && /^\s+[[-]/.test(fence.lines[j]!); j++) {
          text += ` ${fence.lines[j]}`;
        }
        all.push(...invocations(text, `${file}:${fence.line + 1 + i}`));
      });
    }
    for (const { code, line } of inlineCode(prose)) all.push(...invocations(code, `${file}:${line}`));
  }
  return all;
}

/** The options a documented line uses (`[--input` → `--input`, `--set=x` → `--set`). */
function optionsOf(words: string[]): string[] {
  return words
    .map((w) => w.replace(/^[[(]+/, ''))
    .map((w) => /^(--?[A-Za-z][\w-]*)/.exec(w)?.[1])
    .filter((o): o is string => o !== undefined);
}

describe('commands in the README and docs/', () => {
  const commands = documentedCommands();
  /** `<command> --help` of every command, by name; undefined when that help fails. */
  const help = new Map<string, string | undefined>();
  let known: Set<string>;

  beforeAll(async () => {
    const main = await runCli(['--help']);
    known = new Set([...main.stdout.matchAll(/^\s+hatchery-mcp \[?(\w+)/gm)].map((m) => m[1]!));
    const names = new Set(known);
    for (const c of commands)
      if (c.words[0] && !c.words[0].startsWith('-')) names.add(c.words[0].replace(/[[\]]/g, ''));
    await Promise.all(
      [...names].map(async (name) => {
        const r = await runCli([name, '--help']);
        help.set(name, r.code === 0 ? r.stdout : undefined);
      }),
    );
  }, 60_000);

  it('finds the documented commands', () => {
    expect(commands.length).toBeGreaterThan(20);
    for (const c of ['serve', 'run', 'validate', 'graph', 'test', 'schema', 'convert'])
      expect(known).toContain(c);
  });

  it('each names an existing command and only options its --help lists', () => {
    const wrong: string[] = [];
    for (const { where, words } of commands) {
      const first = words[0]?.replace(/^\[(\w+)\]$/, '$1');
      const name = first === undefined || first.startsWith('-') || !/^[a-z]+$/.test(first) ? 'serve' : first;
      const text = help.get(name);
      if (text === undefined) {
        wrong.push(`${where}: hatchery-mcp ${words.join(' ')}: no command "${name}"`);
        continue;
      }
      for (const opt of optionsOf(name === first ? words.slice(1) : words)) {
        if (['-h', '--help', '-v', '--version'].includes(opt)) continue;
        const listed = new RegExp(`(^|[\\s,[(|])${opt.replace(/[-]/g, '\\-')}(?![\\w-])`, 'm').test(text);
        if (!listed) wrong.push(`${where}: hatchery-mcp ${words.join(' ')}: "${name} --help" has no ${opt}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("docs/serving.md's table of options lists only options of serve --help, and all of them", () => {
    const serve = help.get('serve') ?? '';
    const text = readDoc('docs/serving.md');
    const table = text.slice(
      text.indexOf('## Options'),
      text.indexOf('\n## ', text.indexOf('## Options') + 1),
    );
    const documented = new Set(
      [...table.matchAll(/^\| `([^|]*)/gm)].flatMap((m) => optionsOf(m[1]!.split(/[`\s/,]+/))),
    );
    const offered = new Set(
      optionsOf(serve.split('\n').flatMap((l) => (/^\s+-/.test(l) ? l.trim().split(/[\s,]+/) : []))),
    );
    expect([...documented].sort()).toEqual([...offered].sort());
  });

  it('no document tells users to run the unpublished package from the registry', () => {
    const registryUse =
      /npx\s+(?:-y\s+|--yes\s+)?hatchery-mcp(?![\w/-])|npm\s+(?:i|install)\s+(?:-g\s+)?hatchery-mcp(?![\w./-])/;
    const offenders: string[] = [];
    const texts = [...DOC_FILES, 'hatchery/notes/welcome.md'];
    for (const file of texts) {
      for (const paragraph of readDoc(file).split(/\n\s*\n/)) {
        if (registryUse.test(paragraph) && !/once the package is published/i.test(paragraph)) {
          offenders.push(`${file}: ${paragraph.split('\n').find((l) => registryUse.test(l)) ?? paragraph}`);
        }
      }
    }
    expect(offenders).toEqual([]);
    // The README says how npx will work once published, and gives the working paths before that.
    const readme = readDoc('README.md');
    expect(readme).toMatch(/Once the package is published, `npx -y hatchery-mcp/);
    expect(readme.indexOf('npm install -g .')).toBeLessThan(readme.indexOf('Once the package is published'));
  });

  it("mcp.json.example's client entries start the CLI with node by absolute path, never npx", () => {
    const example = JSON.parse(readFileSync(path.join(REPO_ROOT, 'mcp.json.example'), 'utf8')) as Record<
      string,
      unknown
    >;
    const entries = Object.entries(example)
      .filter(([key]) => key !== 'mcpServers' && !key.startsWith('_'))
      .map(([key, block]) => {
        const b = block as { mcpServers?: Record<string, unknown>; servers?: Record<string, unknown> };
        return [key, (b.mcpServers ?? b.servers)?.hatchery as { command: string; args: string[] }] as const;
      });
    expect(entries.map(([key]) => key)).toEqual([
      'claude_desktop_config.json',
      '.vscode/mcp.json',
      '.cursor/mcp.json',
    ]);
    for (const [key, entry] of entries) {
      expect(entry.command, key).toMatch(/^\/ABSOLUTE\/PATH\/TO\/node$/);
      expect(entry.args[0], key).toMatch(/^\/ABSOLUTE\/PATH\/TO\/hatchery-mcp\/dist\/cli\.js$/);
      expect(entry.args[1], key).toBe('--dir');
      expect(entry.args[2], key).toMatch(/^(\/ABSOLUTE\/PATH\/TO|\$\{workspaceFolder\})\/hatchery$/);
    }
  });
});
