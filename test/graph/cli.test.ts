import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { echo, hatch, REPO_ROOT, runCli, tempDir } from '../helpers.js';

/**
 * Checks that `xml` is well-formed: every tag closes in order, attribute values are quoted, and text
 * holds no raw `<` or `&` outside entities. Returns the problem, or undefined.
 */
function xmlProblem(xml: string): string | undefined {
  const stack: string[] = [];
  const token =
    /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  for (const m of xml.matchAll(token)) {
    const [, close, tag, , selfClose, text, stray] = m;
    if (stray) return `a stray "<" at ${m.index}: ${xml.slice(m.index, m.index + 40)}`;
    if (text !== undefined) {
      if (/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(text))
        return `a raw "&" in ${text.slice(0, 60)}`;
      continue;
    }
    if (!tag) continue;
    if (close) {
      if (stack.pop() !== tag) return `</${tag}> closes nothing open at ${m.index}`;
    } else if (!selfClose) stack.push(tag);
  }
  return stack.length > 0 ? `unclosed <${stack.join('>, <')}>` : undefined;
}

function writeGraphFile(): string {
  const dir = tempDir();
  const file = path.join(dir, 'router.json');
  writeFileSync(
    file,
    JSON.stringify(
      hatch([
        { name: 'Classify', usr_prompt: '{{ ctx.input }}', next: ['Bug_report', 'Question'] },
        echo('Bug_report', 'bug'),
        { name: 'Question', type: 'loop', body: 'Answer', until: 'x < y & "z"', next: 'END' },
        echo('Answer', 'a'),
      ]),
    ),
  );
  return file;
}

describe('hatchery-mcp graph', () => {
  it('prints the Mermaid text by default', async () => {
    const r = await runCli(['graph', writeGraphFile()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^flowchart TD\n {2}hatchery_start\(\["start"\]\)\n/);
    expect(r.stdout).toContain('  n_Classify -->|"Bug_report"| n_Bug_report');
    expect(r.stdout).toContain('  n_Classify -->|"default"| n_Question');
    expect(r.stdout).toContain(`  n_Question -->|"until: x ‹ y & 'z'"| hatchery_end`);
    expect(r.stderr).toBe('');
  });

  it('writes a well-formed SVG naming every node, to a file with -o or to stdout', async () => {
    const file = writeGraphFile();
    const out = path.join(path.dirname(file), 'router.svg');
    const [toFile, toStdout] = await Promise.all([
      runCli(['graph', file, '--format', 'svg', '-o', out]),
      runCli(['graph', file, '--format', 'svg']),
    ]);
    expect(toFile).toMatchObject({ code: 0, stdout: '' });
    expect(toStdout.code).toBe(0);
    const svg = readFileSync(out, 'utf8');
    expect(toStdout.stdout).toBe(svg);
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(xmlProblem(svg)).toBeUndefined();
    for (const name of ['Classify', 'Bug_report', 'Question', 'Answer', 'start', 'END']) {
      expect(svg).toContain(`>${name}<`);
    }
    expect(svg).toContain('until: x ‹ y &amp; &#39;z&#39;');
    // Opening the picture fetches nothing: no web-font import.
    expect(svg).not.toMatch(/@import|https:\/\/fonts/);
    expect(svg).toContain('font-family:');
  });

  it('draws the graph for the terminal with --format ascii', async () => {
    const r = await runCli(['graph', writeGraphFile(), '--format', 'ascii']);
    expect(r.code).toBe(0);
    for (const name of ['Classify', 'Bug_report', 'Question', 'Answer', 'start', 'END', 'default', 'body']) {
      expect(r.stdout).toContain(name);
    }
    // Not a terminal: no colour codes.
    expect(r.stdout).not.toContain('\u001b[');
  });

  it('draws two routes between the same nodes as one edge, so their labels never overlap', async () => {
    const r = await runCli([
      'graph',
      path.join(REPO_ROOT, 'hatchery', 'research-team.json'),
      '--format',
      'ascii',
    ]);
    expect(r.code, r.stderr).toBe(0);
    // The loop leaves for Answer when its condition holds and on its limit: one label says both.
    expect(r.stdout).toContain('until: APPROVED / on_limit');
    const mermaid = await runCli(['graph', path.join(REPO_ROOT, 'hatchery', 'research-team.json')]);
    expect(mermaid.stdout.match(/n_Draft [-.]+>.* n_Answer/g)).toHaveLength(1);
  });

  it("draws a parallel node's branches below the start node in the SVG", async () => {
    const r = await runCli([
      'graph',
      path.join(REPO_ROOT, 'hatchery', 'parallel-review.json'),
      '--format',
      'svg',
    ]);
    expect(r.code, r.stderr).toBe(0);
    // Each node's first vertical coordinate (a rect's y, a polygon's first point, a circle's cy).
    const tops = new Map<string, number>();
    const parts = r.stdout.split(/(?=<g class="node" data-id=")/);
    for (const part of parts) {
      const id = /^<g class="node" data-id="([^"]+)"/.exec(part)?.[1];
      const y = /\by="([\d.]+)"|\bcy="([\d.]+)"|points="[\d.]+,([\d.]+)/.exec(part);
      if (id && y) tops.set(id, Number(y[1] ?? y[2] ?? y[3]));
    }
    const start = tops.get('hatchery_start')!;
    for (const node of ['n_Reviews', 'n_Correctness', 'n_Clarity', 'n_Tone', 'n_Summary', 'hatchery_end'])
      expect(tops.get(node), node).toBeGreaterThan(start);
    for (const branch of ['n_Correctness', 'n_Clarity', 'n_Tone'])
      expect(tops.get(branch), branch).toBeGreaterThan(tops.get('n_Reviews')!);
    // The Mermaid text itself keeps the plain arrow back, which every Mermaid reads.
    const mermaid = await runCli(['graph', path.join(REPO_ROOT, 'hatchery', 'parallel-review.json')]);
    expect(mermaid.stdout).toContain('n_Correctness -.->|"done"| n_Reviews');
  });

  it('refuses a bad format or a missing file with exit 2, an invalid file with exit 3', async () => {
    const dir = tempDir();
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(hatch([echo('A', 'a', { next: 'Nowhere' })])));
    const [format, none, invalid] = await Promise.all([
      runCli(['graph', writeGraphFile(), '--format', 'png']),
      runCli(['graph']),
      runCli(['graph', bad]),
    ]);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be one of mermaid, svg, ascii, got "png"');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('graph takes one hatchery file');
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toContain(`${bad}: nodes/0/next`);
    expect(invalid.stdout).toBe('');
  });
});
