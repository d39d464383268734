import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files whose imports are followed: what Node (or a loader hook) runs as JavaScript. */
const CODE_FILE = /\.(?:[cm]?js|[cm]?ts|jsx|tsx)$/i;

/**
 * The specifiers worth following, from a cheap scan rather than a parse: `... from '<spec>'` (static
 * import and export-from), `import '<spec>'`, `import('<spec>')` and `require('<spec>')`, in any quotes
 * (a template literal's `${...}` is kept as text: it names no file, and protects none). A match in
 * a comment or a string only protects one file more; a specifier built at run time is not seen.
 */
const SPECIFIER = /(?:\bfrom|\bimport|\brequire)\s*\(?\s*(['"`])([^'"`\r\n]+)\1/g;

/** Suffixes CommonJS tries for an extensionless `require('./x')`. */
const CJS_SUFFIXES = ['.js', '.cjs', '.mjs', '.json', `${path.sep}index.js`];

/** Past this many files the walk stops: a js: tool's own code is never that large. */
const MAX_FILES = 10_000;
/** Past this size a file is protected but not scanned (bundles and generated code). */
const MAX_SCAN_BYTES = 4 * 1024 * 1024;

/** True for a file name Node would run as a module (and whose imports are followed). */
export function isCodeFile(file: string): boolean {
  return CODE_FILE.test(file);
}

/** The local file a specifier names (relative, absolute or file: URL), or undefined for a package. */
function localTarget(spec: string, from: string): string | undefined {
  if (spec.startsWith('file:')) {
    try {
      return fileURLToPath(spec);
    } catch {
      return undefined;
    }
  }
  if (!spec.startsWith('./') && !spec.startsWith('../') && !spec.startsWith('/')) return undefined;
  // Bare names resolve into node_modules, protected as a whole; a query or hash names the same file.
  return path.resolve(path.dirname(from), spec.replace(/[?#].*$/, ''));
}

/** The real path of `p` when it exists; else its real folder and its name (a file a run could create). */
async function realOrPlanned(p: string): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await realpath(p), exists: true };
  } catch {
    try {
      return { real: path.join(await realpath(path.dirname(p)), path.basename(p)), exists: false };
    } catch {
      return { real: p, exists: false };
    }
  }
}

/**
 * The real paths of the local files `entry` imports, directly or through other local files, mapped
 * to `entry`. Files an import names but that do not exist yet are included (a run must not create
 * them); packages are not followed (node_modules is protected whole). Read asynchronously, once per
 * module load.
 */
export async function localImports(entry: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const queue = [entry];
  const seen = new Set<string>([entry]);
  for (let next = 0; next < queue.length && found.size < MAX_FILES; next++) {
    const file = queue[next] as string;
    let text: string;
    try {
      const bytes = await readFile(file);
      if (bytes.length > MAX_SCAN_BYTES) continue;
      text = bytes.toString('utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(SPECIFIER)) {
      const target = localTarget(m[2] as string, file);
      if (target === undefined) continue;
      const candidates = path.extname(target) ? [target] : [target, ...CJS_SUFFIXES.map((s) => target + s)];
      for (const c of candidates) {
        if (seen.has(c)) continue;
        seen.add(c);
        const { real, exists } = await realOrPlanned(c);
        found.set(real, entry);
        if (exists && isCodeFile(real)) queue.push(real);
      }
    }
  }
  found.delete(entry);
  return found;
}
