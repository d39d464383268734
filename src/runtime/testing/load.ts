import { existsSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import {
  bySourcePosition,
  HatcheryError,
  ValidationError,
  type ValidationProblem,
} from '../../core/errors.js';
import { describeIssues } from '../../schema/issues.js';
import { quote } from '../../schema/suggest.js';
import { type TestFile, testFileSchema } from '../../schema/test-file.js';

/** Names of test files: `x.test.yaml`, `x.test.yml`, `x.test.json`. */
export const TEST_FILE = /\.test\.(ya?ml|json)$/i;

/** A validated test file with its paths resolved. */
export interface LoadedTestFile {
  file: string;
  def: TestFile;
  /** Absolute path of the hatchery under test. */
  hatchery: string;
  /** Absolute cassette path of each case (undefined: the case runs live). */
  cassettes: (string | undefined)[];
}

/**
 * The test files at `path`: the file itself, or every test file below the folder (sorted, skipping
 * node_modules and dot folders). A missing path is a USAGE error.
 */
export async function findTestFiles(path: string): Promise<string[]> {
  if (!existsSync(path)) throw new HatcheryError('USAGE', `no such file or folder: ${path}`);
  if (!statSync(path).isDirectory()) return [resolve(path)];
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (TEST_FILE.test(e.name)) found.push(resolve(p));
    }
  };
  await walk(path);
  return found;
}

/**
 * Reads and validates a test file (YAML, or JSON which YAML reads too); every problem is reported at
 * once, with its path and source line, in a ValidationError. Referenced files must exist, except
 * cassettes when `recordMissing` will create them.
 */
export async function loadTestFile(file: string, recordMissing = false): Promise<LoadedTestFile> {
  const text = await readFile(file, 'utf8');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    // Only the first: the parser's later errors mostly follow from it.
    throw new ValidationError(file, [
      {
        path: '',
        message: syntax.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''),
        line: syntax.linePos?.[0].line,
        column: syntax.linePos?.[0].col,
      },
    ]);
  }
  const raw = doc.toJS() as unknown;
  const problems: ValidationProblem[] = [];
  const at = (segs: readonly PropertyKey[], message: string) => {
    const pos = position(doc, lines, segs);
    problems.push({ path: segs.map(String).join('/'), message, ...pos });
  };
  const parsed = testFileSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    for (const m of describeIssues(parsed.error.issues, raw ?? {}, testFileSchema)) at(m.segs, m.message);
    throw new ValidationError(file, problems.sort(bySourcePosition));
  }
  const def = parsed.data;
  const dir = dirname(file);
  const hatchery = resolve(dir, def.hatchery);
  if (!existsSync(hatchery)) at(['hatchery'], `no such file: ${hatchery}`);
  const cassettes = def.cases.map((c, i) => {
    const rel = c.cassette ?? def.cassette;
    if (rel === undefined) return undefined;
    const abs = resolve(dir, rel);
    if (!recordMissing && !existsSync(abs)) {
      at(
        c.cassette ? ['cases', i, 'cassette'] : ['cassette'],
        `no such cassette: ${abs}; record it with run --record`,
      );
    }
    return abs;
  });
  const names = new Set<string>();
  def.cases.forEach((c, i) => {
    if (names.has(c.name))
      at(['cases', i, 'name'], `two cases named ${quote(c.name)}: give each its own name`);
    names.add(c.name);
  });
  if (problems.length > 0) throw new ValidationError(file, problems.sort(bySourcePosition));
  return { file, def, hatchery, cassettes };
}

/** Line and column of the deepest node of `segs` that exists in the document. */
function position(
  doc: ReturnType<typeof parseDocument>,
  lines: LineCounter,
  segs: readonly PropertyKey[],
): { line?: number; column?: number } {
  for (let n = segs.length; n >= 0; n--) {
    const node = doc.getIn(segs.slice(0, n) as unknown[], true) as
      | { range?: [number, number, number] }
      | undefined;
    if (node?.range) {
      const pos = lines.linePos(node.range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  return {};
}
