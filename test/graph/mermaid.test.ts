import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseMermaid } from 'beautiful-mermaid';
import { describe, expect, it } from 'vitest';
import { hatcheryToMermaid, mermaidId, mermaidLabel } from '../../src/loader/mermaid.js';
import { echo, hatch, load, tempDir } from '../helpers.js';

/** A folder holding a valid hatchery at `rel`, for hatch: references to point at. */
function dirWith(rel: string): string {
  const dir = tempDir();
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), JSON.stringify(hatch([echo('E', 'e')])));
  return dir;
}

describe('hatcheryToMermaid', () => {
  it('draws a small router exactly: start, shapes, the matched word on each edge, default last, END', () => {
    const h = load(
      hatch([
        {
          name: 'Classify',
          usr_prompt: 'Bug or Question? {{ ctx.input }}',
          next: ['Bug', 'Question', 'Other'],
        },
        echo('Bug', 'a bug'),
        { name: 'Question', type: 'script', cmd: ['cat'] },
        echo('Other', 'other', { next: 'END' }),
      ]),
    );
    expect(hatcheryToMermaid(h)).toBe(
      [
        'flowchart TD',
        '  hatchery_start(["start"])',
        '  n_Classify("Classify<br/>drone")',
        '  n_Bug[["Bug<br/>tool"]]',
        '  n_Question["Question<br/>script"]',
        '  n_Other[["Other<br/>tool"]]',
        '  hatchery_end((("END")))',
        '  hatchery_start --> n_Classify',
        '  n_Classify -->|"Bug"| n_Bug',
        '  n_Classify -->|"Question"| n_Question',
        '  n_Classify -->|"default"| n_Other',
        '  n_Bug --> hatchery_end',
        '  n_Question --> hatchery_end',
        '  n_Other --> hatchery_end',
        '',
      ].join('\n'),
    );
  });

  it('draws every kind with its own shape and labels loops, branches, maps, supervisors and tools', () => {
    const h = load(
      hatch(
        [
          { name: 'Boss', usr_prompt: 'pick', route: 'choose', next: ['Fan', 'Each'] },
          { name: 'Fan', type: 'parallel', branches: ['Left', 'Right'], next: 'Refine' },
          echo('Left', 'l'),
          echo('Right', 'r'),
          { name: 'Each', type: 'map', items: '["a","b"]', node: 'Item', next: 'Refine' },
          { name: 'Item', type: 'script', cmd: ['cat'] },
          {
            name: 'Refine',
            type: 'loop',
            body: 'Draft',
            until: 'APPROVED',
            max_iterations: 3,
            on_limit: 'Give.up',
            next: 'Done',
          },
          {
            name: 'Draft',
            usr_prompt: 'write',
            tools: ['node:Helper-1', 'hatch:sub/other.json', 'read_file'],
          },
          echo('Helper-1', 'help'),
          echo('Give.up', 'gave up', { next: 'END' }),
          { name: 'Done', type: 'tool', tool_name: 'node:Helper-1', tool_args: { input: 'done' } },
        ],
        { start: 'Boss' },
      ),
      dirWith('sub/other.json'),
    );
    const text = hatcheryToMermaid(h);
    const lines = text.split('\n');
    // One distinct shape per kind.
    expect(lines).toContain('  n_Boss("Boss<br/>drone")');
    expect(lines).toContain('  n_Fan{{"Fan<br/>parallel"}}');
    expect(lines).toContain('  n_Each[("Each<br/>map")]');
    expect(lines).toContain('  n_Item["Item<br/>script"]');
    expect(lines).toContain('  n_Refine{"Refine<br/>loop"}');
    expect(lines).toContain('  n_Left[["Left<br/>tool"]]');
    // Ids are identifiers even for names with "." and "-".
    expect(lines).toContain('  x_Give_dup[["Give.up<br/>tool"]]');
    expect(lines).toContain('  x_Helper_h1[["Helper-1<br/>tool"]]');
    // Routing labels.
    expect(lines).toContain('  n_Boss -->|"choose"| n_Fan');
    expect(lines).toContain('  n_Boss -->|"choose"| n_Each');
    expect(lines).toContain('  n_Fan -->|"branch"| n_Left');
    expect(lines).toContain('  n_Fan -->|"branch"| n_Right');
    expect(lines).toContain('  n_Fan --> n_Refine');
    expect(lines).toContain('  n_Each -->|"each item"| n_Item');
    expect(lines).toContain('  n_Refine -->|"body"| n_Draft');
    expect(lines).toContain('  n_Refine -->|"until: APPROVED"| n_Done');
    expect(lines).toContain('  n_Refine -.->|"on_limit"| x_Give_dup');
    // The end of a branch, item chain or loop body hands back to the node that runs it.
    expect(lines).toContain('  n_Left -.->|"done"| n_Fan');
    expect(lines).toContain('  n_Item -.->|"done"| n_Each');
    expect(lines).toContain('  n_Draft -.->|"done"| n_Refine');
    // node: tools point at the node, hatch: tools at a file box; built-in tools are not drawn.
    expect(lines).toContain('  n_Draft -.->|"tool"| x_Helper_h1');
    expect(lines).toContain('  n_Done -.->|"tool"| x_Helper_h1');
    expect(lines).toContain('  file_1>"sub/other.json"]');
    expect(lines).toContain('  n_Draft -.->|"hatch"| file_1');
    expect(text).not.toContain('read_file');
    expect(lines).toContain('  hatchery_start --> n_Boss');
    expect(lines).toContain('  x_Give_dup --> hatchery_end');

    // beautiful-mermaid reads it back: every node with its shape, every edge.
    const g = parseMermaid(text);
    expect(g.nodes.get('n_Fan')).toMatchObject({ label: 'Fan\nparallel', shape: 'hexagon' });
    expect(g.nodes.get('n_Each')?.shape).toBe('cylinder');
    expect(g.nodes.get('n_Refine')?.shape).toBe('diamond');
    expect(g.nodes.get('n_Boss')?.shape).toBe('rounded');
    expect(g.nodes.get('n_Left')?.shape).toBe('subroutine');
    expect(g.nodes.get('n_Item')?.shape).toBe('rectangle');
    expect(g.nodes.get('hatchery_start')?.shape).toBe('stadium');
    expect(g.nodes.get('hatchery_end')?.shape).toBe('doublecircle');
    expect(g.nodes.get('file_1')?.shape).toBe('asymmetric');
    expect(g.edges).toHaveLength(lines.filter((l) => l.includes('->')).length);
    expect(g.edges.find((e) => e.label === 'on_limit')?.style).toBe('dotted');
  });

  it('keeps a hostile until: text and file name inside their labels', () => {
    const hostile = `a"] --> X[pwned]\n%% #quot; <b>bold</b> \`md\` | pipe #35; ${'long '.repeat(40)}`;
    const fileName = 'a"] --> X[p]\n%% #quot; <b>b</b> `md` | p #35;.json';
    const h = load(
      hatch([
        { name: 'L', type: 'loop', body: 'B', until: hostile, next: 'T' },
        echo('B', 'b'),
        { name: 'T', usr_prompt: 'x', tools: [`hatch:${fileName}`] },
      ]),
      dirWith(fileName),
    );
    const text = hatcheryToMermaid(h);
    // Every label stays on its line: no statement is smuggled in.
    const g = parseMermaid(text);
    expect([...g.nodes.keys()].sort()).toEqual(
      ['file_1', 'hatchery_end', 'hatchery_start', 'n_B', 'n_L', 'n_T'].sort(),
    );
    expect(g.edges).toHaveLength(6);
    const until = g.edges.find((e) => e.label?.startsWith('until: '))!.label!;
    expect(until).toMatch(/…$/);
    expect([...until].length).toBeLessThanOrEqual(48);
    expect(until).not.toMatch(/["[\]<>`|#\n]/);
    expect(until).toContain("a') --› X(pwned)");
    expect(g.nodes.get('file_1')!.label).not.toMatch(/["[\]<>`|#\n]/);
  });

  it('labels and ids are safe for any text and any valid name', () => {
    expect(mermaidLabel('line1\nline2\t"q" [x] #1; <i>')).toBe("line1 line2 'q' (x) ♯1; ‹i›");
    expect(mermaidLabel('x'.repeat(100))).toBe(`${'x'.repeat(47)}…`);
    const names = ['a.b', 'a-b', 'a_b', 'a__b', 'end', '_x'];
    const ids = names.map(mermaidId);
    expect(new Set(ids).size).toBe(names.length);
    for (const id of ids) expect(id).toMatch(/^[nx]_[A-Za-z0-9_]+$/);
    expect(mermaidId('Bug_report')).toBe('n_Bug_report');
  });
});
