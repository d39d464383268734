import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * The package version, read once from the package.json two folders up from this module: the same
 * file from dist/core/ and from src/core/ (tsx, tests). `0.0.0` when it cannot be read.
 */
export function packageVersion(): string {
  if (cached === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        version?: unknown;
      };
      cached = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    } catch {
      cached = '0.0.0';
    }
  }
  return cached;
}
