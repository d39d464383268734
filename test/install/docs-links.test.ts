/**
 * Links in the README and docs/ work in an installed copy too (npm's page of the package, an editor
 * opening node_modules/hatchery-mcp/README.md): every relative link names a file the tarball holds,
 * and every #anchor names a heading of its document.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { anchors, DOC_FILES, packedFiles, readDoc, splitFences } from './docs.js';

/** Every markdown link of a document outside code: its target and line. */
function links(file: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  splitFences(readDoc(file))
    .prose.split('\n')
    .forEach((l, i) => {
      for (const m of l.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line: i + 1 });
    });
  return out;
}

describe('links of the README and docs/', () => {
  let packed: string[];
  beforeAll(async () => {
    packed = await packedFiles();
  }, 60_000);

  it('the package ships every document the README links to', () => {
    for (const f of DOC_FILES) expect(packed).toContain(f);
    expect(packed).toContain('mcp.json.example');
    expect(packed).toContain('dist/cli.js');
    // tsc's incremental state is of no use in an installed copy.
    expect(packed.filter((f) => f.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('every relative link names a file in the tarball, and every anchor a heading', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of DOC_FILES) {
      for (const { target, line } of links(file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const [rel, anchor] = target.split('#') as [string, string | undefined];
        const where = `${file}:${line}: ${target}`;
        const resolved =
          rel === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), rel));
        const inPack =
          packed.includes(resolved) || packed.some((p) => p.startsWith(`${resolved.replace(/\/$/, '')}/`));
        if (resolved.startsWith('..') || !inPack) {
          broken.push(`${where}: ${resolved} is not in the package`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readDoc(resolved)).has(anchor)) {
          broken.push(`${where}: no heading #${anchor} in ${resolved}`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });
});
