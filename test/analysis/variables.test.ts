import { describe, expect, it } from 'vitest';
import { echo, hatch } from '../helpers.js';
import { loaded, report } from './helpers.js';

const dflt = (e: string) =>
  `give a default, {{ ${e} | default("") }}, or test it first: {% if ${e} is defined %}...{% endif %}`;

/** Start routes by its output: "x" matches neither word, so the last entry (U) is the default. */
const somePaths = (text: string) =>
  hatch([
    echo('S', 'x', { next: ['Saver', 'U'] }),
    echo('Saver', 'y', { save_output: 'v', next: 'U' }),
    echo('U', text),
  ]);

describe('template variables against the graph', () => {
  it('an undefined ctx variable is an error with its position, a did-you-mean and the fix', () => {
    expect(
      report(
        hatch(
          [
            { name: 'Outline', usr_prompt: 'Outline {{ ctx.topic }}', save_output: 'outline', next: 'Write' },
            { name: 'Write', usr_prompt: 'Write from\n  {{ ctx.outlin }}' },
          ],
          { inputs: { topic: 't' } },
        ),
      ),
    ).toEqual([
      'h.json: nodes/1/usr_prompt: ctx.outlin (line 2, column 6 of the template) is not defined when "Write" runs: no declared input, files entry or save_output has that name (did you mean "outline"?); declare "outlin" in "inputs", or add "save_output": "outlin" to a node that runs before "Write", or give a default: {{ ctx.outlin | default("") }}',
    ]);
  });

  it('a variable saved only by a later node is an error that names the node', () => {
    expect(
      report(
        hatch([echo('A', '{{ ctx.summary }}', { next: 'B' }), echo('B', 'b', { save_output: 'summary' })]),
      ),
    ).toEqual([
      'h.json: nodes/0/tool_args/text: ctx.summary (line 1, column 4 of the template) is not defined when "A" runs: only "B" saves it (save_output), and never before "A" runs; route "B" before "A", or give a default: {{ ctx.summary | default("") }}',
    ]);
  });

  it('declared inputs, files, ctx.input and fread are defined everywhere', () => {
    const h = loaded(
      hatch(
        [echo('A', '{{ ctx.topic }} {{ ctx.notes }} {{ ctx.input }} {{ ctx.fread("x") }} {{ fread("y") }}')],
        {
          inputs: { topic: 't' },
          files: { notes: 'notes.txt' },
        },
      ),
    );
    expect(h.warnings).toEqual([]);
  });

  it('a variable set on some paths only is a warning', () => {
    expect(report(somePaths('{{ ctx.v }}'))).toEqual([
      `h.json: nodes/2/tool_args/text: warning: ctx.v (line 1, column 4 of the template) may be undefined when "U" runs: it is set on some paths to this node but not on all (saved by "Saver"); ${dflt('ctx.v')}`,
    ]);
  });

  it('a default, an if on the variable, `is defined` and `or` take the warning away', () => {
    for (const t of [
      '{{ ctx.v | default("") }}',
      '{{ ctx.v | d("none") }}',
      '{% if ctx.v %}{{ ctx.v }}{% endif %}',
      '{% if ctx.v is defined %}{{ ctx.v | upper }}{% else %}none{% endif %}',
      '{{ ctx.v or "none" }}',
      '{{ ctx.v if ctx.v else "none" }}',
      '{% for x in ctx.v %}{{ x }}{% endfor %}',
    ])
      expect(report(somePaths(t)), t).toEqual([]);
  });

  it('a default on a variable no path defines is a warning (a typo, most likely)', () => {
    expect(report(hatch([echo('A', '{{ ctx.verbos | default("") }}')]))).toEqual([
      'h.json: nodes/0/tool_args/text: warning: ctx.verbos (line 1, column 4 of the template) is never defined when "A" runs, so the template always takes its default or guard: no declared input, files entry or save_output has that name; declare "verbos" in "inputs", or add "save_output": "verbos" to a node that runs before "A"',
    ]);
  });

  it('a bare name for a declared input suggests ctx.<name>; set, for and macro names are fine', () => {
    expect(
      report(hatch([{ name: 'A', usr_prompt: 'About {{ topic }}' }], { inputs: { topic: 't' } })),
    ).toEqual([
      'h.json: nodes/0/usr_prompt: "topic" (line 1, column 10 of the template) is not a template variable: ctx variables are read as ctx.topic; write {{ ctx.topic }}',
    ]);
    expect(report(hatch([echo('Plan', 'p', { next: 'B' }), echo('B', '{{ Plan }}')]))).toEqual([
      'h.json: nodes/1/tool_args/text: "Plan" (line 1, column 4 of the template) is not a template variable: node outputs are read as out.Plan; write {{ out.Plan }}',
    ]);
    const ok = loaded(
      hatch([
        echo(
          'A',
          '{% set n = 2 %}{% for w in ["a"] %}{{ w }}{{ loop.index }}{% endfor %}{% macro m(x, y=1) %}{{ x }}{{ y }}{% endmacro %}{{ m(n) }}{{ range(2) | join(",") }}',
        ),
      ]),
    );
    expect(ok.warnings).toEqual([]);
  });

  it('out.N needs a node N that runs before; the message says that it runs later, or never', () => {
    expect(report(hatch([echo('A', '{{ out.B }}', { next: 'B' }), echo('B', 'b')]))).toEqual([
      'h.json: nodes/0/tool_args/text: out.B (line 1, column 4 of the template) is not set when "A" runs: node "B" runs only after it; read the output of a node that runs before "A", or route "B" before it',
    ]);
    // A node nothing routes to: the error of the node reading its output says why it is never set.
    expect(
      report(
        hatch([
          echo('A', 'a', { next: 'P' }),
          echo('Orphan', 'o'),
          echo('P', '{{ out.A }} {{ out.Orphan }}'),
        ]),
      ),
    ).toEqual([
      'h.json: nodes/1: warning: node "Orphan" is unreachable: no run from the start node "A" gets to it (nothing routes to it through next, on_limit, branches, a map\'s node, a loop\'s body or a node: tool); route to it from a node that runs, or remove it',
      'h.json: nodes/2/tool_args/text: out.Orphan (line 1, column 16 of the template) is not set when "P" runs: node "Orphan" never runs: nothing routes to it; read the output of a node that runs before "P", or route "Orphan" before it',
    ]);
    expect(report(hatch([echo('Alpha', 'a', { next: 'B' }), echo('B', '{{ out.Alpa }}')]))).toEqual([
      'h.json: nodes/1/tool_args/text: out.Alpa (line 1, column 4 of the template) names no node: this file has no node named "Alpa" (did you mean "Alpha"?); nodes: Alpha, B; out.<name> reads the output of the node with that name',
    ]);
    expect(
      loaded(hatch([echo('A', 'a', { next: 'B' }), echo('B', '{{ out.A }} {{ out["A"] }}')])).warnings,
    ).toEqual([]);
  });

  it('map: ctx.item and ctx.index inside the chain only; out.* of the chain stay inside it', () => {
    expect(
      report(
        hatch([
          { name: 'M', type: 'map', items: '["a"]', node: 'Each', next: 'After' },
          echo('Each', '{{ ctx.item }} {{ ctx.index }}', { next: 'Each2' }),
          echo('Each2', '{{ out.Each }} {{ ctx.item }}', { save_output: 'each' }),
          echo('After', '{{ out.M }} {{ ctx.item }} {{ out.Each }}'),
        ]),
      ),
    ).toEqual([
      'h.json: nodes/3/tool_args/text: ctx.item (line 1, column 16 of the template) is not defined when "After" runs: ctx.item is set only in the chain a map node runs, and "After" does not run there; read ctx.item only in the chain a map runs (its "node"), or give a default: {{ ctx.item | default("") }}',
      'h.json: nodes/3/tool_args/text: out.Each (line 1, column 31 of the template) is not set when "After" runs: node "Each" runs in the chain of a parallel branch or a map, whose out.* stay inside that chain (save_output reaches the rest of the run, and a parallel sets out.<branch>); read the output of a node that runs before "After", or route "Each" before it',
    ]);
    // A map may run over no items: what its chain saves is set on some paths only.
    expect(
      report(
        hatch([
          { name: 'M', type: 'map', items: '[]', node: 'Each', next: 'After' },
          echo('Each', '{{ ctx.item }}', { save_output: 'each' }),
          echo('After', '{{ ctx.each }}'),
        ]),
      ),
    ).toEqual([
      `h.json: nodes/2/tool_args/text: warning: ctx.each (line 1, column 4 of the template) may be undefined when "After" runs: it is set on some paths to this node but not on all (saved by "Each"); ${dflt('ctx.each')}`,
    ]);
  });

  it('loop: ctx.iteration in the body and until; a save of the body is maybe-set in the body, set after', () => {
    expect(
      report(
        hatch([
          {
            name: 'L',
            type: 'loop',
            body: 'Step',
            until: '{{ ctx.iteration > 2 and out.Step }}',
            next: 'After',
          },
          echo('Step', '{{ ctx.iteration }} {{ ctx.prev }}', { save_output: 'prev' }),
          echo('After', '{{ out.Step }} {{ ctx.prev }} {{ ctx.iteration }} {{ out.L }}'),
        ]),
      ),
    ).toEqual([
      `h.json: nodes/1/tool_args/text: warning: ctx.prev (line 1, column 24 of the template) may be undefined when "Step" runs: it is set on some paths to this node but not on all (saved by "Step"); ${dflt('ctx.prev')}`,
    ]);
  });

  it('parallel: out.<branch> and branch saves after it, `branches` in join; siblings only maybe', () => {
    expect(
      report(
        hatch([
          {
            name: 'P',
            type: 'parallel',
            branches: ['A', 'B'],
            join: '{{ out.A }} {{ branches[0].output }} {{ ctx.a }}',
            next: 'After',
          },
          echo('A', 'a', { save_output: 'a' }),
          echo('B', '{{ ctx.a }}', { next: 'B2' }),
          echo('B2', '{{ out.B }}'),
          echo('After', '{{ out.A }} {{ out.B }} {{ ctx.a }} {{ out.P }}'),
        ]),
      ),
    ).toEqual([
      `h.json: nodes/2/tool_args/text: warning: ctx.a (line 1, column 4 of the template) may be undefined when "B" runs: it is set on some paths to this node but not on all (saved by "A"); ${dflt('ctx.a')}`,
    ]);
  });

  it('on_limit: taken after the limited node ran, so what it saved and what led back to it are set', () => {
    expect(
      loaded(
        hatch([
          echo('Write', 'draft', { save_output: 'draft', next: 'Review', max_visits: 2, on_limit: 'Final' }),
          echo('Review', 'again', { next: ['END', 'Write'] }),
          echo('Final', '{{ ctx.draft }} {{ out.Review }} {{ out.Write }}'),
        ]),
      ).warnings,
    ).toEqual([]);
  });

  it('node: tools run their chain with ctx.input; write_output sees the node own output', () => {
    const h = loaded(
      hatch([
        {
          name: 'Ask',
          usr_prompt: '{{ ctx.input }}',
          tools: ['node:Look'],
          write_output: 'o/{{ out.Ask }}.txt',
        },
        echo('Look', '{{ ctx.input }}'),
      ]),
    );
    expect(h.warnings).toEqual([]);
  });

  it('checks every template field: sys_prompt, spawn, tool_args at depth, cmd, stdin, items', () => {
    expect(
      report(
        hatch([
          {
            name: 'D',
            sys_prompt: '{{ ctx.a }}',
            usr_prompt: 'x',
            spawn: { templates: [{ name: 'r', desc: 'd', sys_prompt: 'do {{ task }} {{ ctx.b }}' }] },
            next: 'T',
          },
          {
            name: 'T',
            type: 'tool',
            tool_name: 'shell_exec',
            tool_args: { argv: ['echo', 'x {{ ctx.c }}'], stdin: '{{ ctx.g }}' },
            next: 'S',
          },
          { name: 'S', type: 'script', cmd: ['cat', '{{ ctx.d }}'], stdin: '{{ ctx.e }}', next: 'M' },
          { name: 'M', type: 'map', items: '{{ ctx.f }}', node: 'E' },
          echo('E', 'e'),
        ]),
      ).map((l) => l.replace(/ \(line.*/, '')),
    ).toEqual([
      'h.json: nodes/0/sys_prompt: ctx.a',
      'h.json: nodes/0/spawn/templates/0/sys_prompt: ctx.b',
      'h.json: nodes/1/tool_args/argv/1: ctx.c',
      'h.json: nodes/1/tool_args/stdin: ctx.g',
      'h.json: nodes/2/cmd/1: ctx.d',
      'h.json: nodes/2/stdin: ctx.e',
      'h.json: nodes/3/items: ctx.f',
    ]);
  });

  it('a template syntax error gives the line and column inside the template', () => {
    const res = report(hatch([{ name: 'A', usr_prompt: 'Hi\n  {{ ctx.x | }}' }]));
    expect(res).toEqual([
      'h.json: nodes/0/usr_prompt: template syntax error at line 2, column 14 of the template: expected symbol, got variable-end',
    ]);
    expect(report(hatch([{ name: 'A', usr_prompt: 'Hi\n  there {{ ctx.x ' }]))).toEqual([
      'h.json: nodes/0/usr_prompt: template syntax error at line 2, column 9 of the template: expected variable end',
    ]);
  });

  it('reports each problem once', () => {
    expect(report(hatch([echo('A', '{{ ctx.nope }} and {{ ctx.nope }}')]))).toHaveLength(1);
  });

  it('the example hatcheries load without errors or warnings', async () => {
    const { findHatcheryFiles, loadHatchery } = await import('../../src/loader/load.js');
    const { REPO_ROOT } = await import('../helpers.js');
    for (const f of await findHatcheryFiles(`${REPO_ROOT}hatchery`))
      expect((await loadHatchery(f)).warnings, f).toEqual([]);
  });
});
