import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers.js';

// Issue 38's rules for the shape of the source: a constructor takes at most five positional
// parameters (more go in an options object), and no file grows past 450 lines.
const SRC = path.join(REPO_ROOT, 'src');
const files = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.split(path.sep).join('/'));

/** `file:line (n parameters)` for each constructor of `text` with more than five parameters. */
function longConstructors(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isConstructorDeclaration(n) && n.parameters.length > 5) {
      const line = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
      found.push(`${file}:${line} (${n.parameters.length} parameters)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

describe('source shape', () => {
  it('has no constructor with more than five positional parameters', () => {
    const long = files.flatMap((f) => longConstructors(f, readFileSync(path.join(SRC, f), 'utf8')));
    expect(long).toEqual([]);
  });

  it('sees a long constructor however its parameters are written', () => {
    const text = [
      'class A {',
      '  constructor(',
      '    readonly a: string,',
      '    private readonly b: (x: Map<string, number>) => void,',
      '    c: Array<() => void> = [],',
      '    d?: number,',
      '    /** e */ e = 1,',
      '    ...f: string[]',
      '  ) {}',
      '}',
      'class B { constructor(a: number, b: number, c: number, d: number, e: number) {} }',
    ].join('\n');
    expect(longConstructors('x.ts', text)).toEqual(['x.ts:2 (6 parameters)']);
  });

  it('has no file over 450 lines', () => {
    const long = files
      .map((f) => ({ f, lines: readFileSync(path.join(SRC, f), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 450)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
