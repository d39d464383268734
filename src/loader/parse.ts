import type { ValidationProblem } from '../errors.js';

/** Parses JSON text; a syntax error becomes a problem with line and column. */
export function parseJson(text: string): { value?: unknown; problem?: ValidationProblem } {
  if (text.trim() === '')
    return { problem: { path: '', message: 'the file is empty (expected a JSON object)' } };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const msg = (err as Error).message;
    const m = /position (\d+)/.exec(msg);
    let where = '';
    if (m) {
      const pos = Number(m[1]);
      const before = text.slice(0, pos);
      const line = before.split('\n').length;
      const col = pos - before.lastIndexOf('\n');
      where = ` at line ${line}, column ${col}`;
    }
    const cleaned = msg.replace(/\s*in JSON at position \d+.*$/s, '').replace(/^JSON\.parse: /, '');
    return { problem: { path: '', message: `invalid JSON${where}: ${cleaned}` } };
  }
}
