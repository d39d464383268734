import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where this copy of hatchery-mcp lives: its root (package.json, schema/) and the code folder it runs from. */
export interface PackagePaths {
  root: string;
  /** `dist/` when built (tsc's tree or the CLI's bundle chunks), `src/` under tsx and the tests. */
  code: string;
}

let paths: PackagePaths | undefined;
let version: string | undefined;

/**
 * The package's folders, found by walking up from this module to the `dist/` or `src/` folder beside
 * package.json: a module's depth differs between tsc's tree (dist/core/) and the CLI's bundle
 * (dist/chunks/, or dist/ itself), so no fixed `../..` holds for both.
 */
export function packagePaths(): PackagePaths {
  if (paths) return paths;
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = path.dirname(dir)) {
    const root = path.dirname(dir);
    const name = path.basename(dir);
    if ((name === 'dist' || name === 'src') && existsSync(path.join(root, 'package.json'))) {
      paths = { root, code: dir };
      return paths;
    }
    if (root === dir) break;
  }
  // Not laid out as the package is (a copied file): the folder above this module's, as tsc emits it.
  paths = { root: path.resolve(here, '..', '..'), code: path.resolve(here, '..') };
  return paths;
}

/** The package version, read once from package.json. `0.0.0` when it cannot be read. */
export function packageVersion(): string {
  if (version === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(packagePaths().root, 'package.json'), 'utf8')) as {
        version?: unknown;
      };
      version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    } catch {
      version = '0.0.0';
    }
  }
  return version;
}
