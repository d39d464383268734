/**
 * Helpers of the install tests: the user-facing documents, their code and links, the package's file
 * list, and running npm the way a user's shell does.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers.js';

/** The documents a user reads, relative to the repository root: the README and docs/*.md. */
export const DOC_FILES = [
  'README.md',
  ...readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The text of a document (path relative to the repository root). */
export function readDoc(file: string): string {
  return readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

/** A fenced code block: its info string (`sh`, `json`, or empty), its lines, and where it starts. */
export interface Fence {
  lang: string;
  lines: string[];
  line: number;
}

/** Splits markdown into fenced code blocks and the prose between them (fences replaced by blank lines). */
export function splitFences(text: string): { fences: Fence[]; prose: string } {
  const fences: Fence[] = [];
  const prose: string[] = [];
  let open: Fence | undefined;
  text.split('\n').forEach((line, i) => {
    const m = /^\s*(```+|~~~+)\s*([\w-]*)/.exec(line);
    if (m && !open) {
      open = { lang: m[2] ?? '', lines: [], line: i + 1 };
      prose.push('');
    } else if (m && open) {
      fences.push(open);
      open = undefined;
      prose.push('');
    } else if (open) {
      open.lines.push(line);
      prose.push('');
    } else {
      prose.push(line);
    }
  });
  return { fences, prose: prose.join('\n') };
}

/** The inline code spans of prose (`...`), with the line each is on. */
export function inlineCode(prose: string): { code: string; line: number }[] {
  const spans: { code: string; line: number }[] = [];
  prose.split('\n').forEach((l, i) => {
    for (const m of l.matchAll(/`([^`]+)`/g)) spans.push({ code: m[1]!, line: i + 1 });
  });
  return spans;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a document's headings (outside code), numbered like GitHub's for repeats. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of splitFences(text).prose.split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The environment of a user's shell: this one without the npm_* variables `npm test` adds. */
export function shellEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

/** Runs npm with `args` in `cwd`; resolves with both streams and the wall time, rejects on failure. */
export function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile('npm', args, { cwd, env: shellEnv(), maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`npm ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/**
 * The files `npm pack` puts in the tarball. Scripts are skipped: dist/ is already built (npm test and
 * the global setup build it), and prepack's build would rewrite schema/ while other test files read it.
 */
export async function packedFiles(): Promise<string[]> {
  const { stdout } = await npm(['pack', '--dry-run', '--json', '--ignore-scripts'], REPO_ROOT);
  const [pack] = JSON.parse(stdout) as { files: { path: string }[] }[];
  return pack!.files.map((f) => f.path);
}

/**
 * npm's warning lines, except the one this kind of machine's ~/.npmrc causes (`nodedir`, a setting of
 * node-gyp that npm 11 no longer knows) and that no package can avoid.
 */
export function npmWarnings(output: string): string[] {
  return output
    .split('\n')
    .filter((l) => /\bnpm warn\b|\bWARN\b/i.test(l))
    .filter((l) => !/^npm warn Unknown user config "nodedir"\./.test(l));
}
