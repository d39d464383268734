/** Which files of a folder are hatchery files, by name: what a server lists before loading any. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type IgnoreRules, ignoreRulesOf } from './ignore.js';
import { isYamlFile } from './yaml.js';

/** True for a file name a hatchery can have: `.json`, `.yaml`, `.yml`. */
export function isHatcheryFileName(name: string): boolean {
  return name.endsWith('.json') || isYamlFile(name);
}

/**
 * Every file below `dir` with a hatchery's extension (`*.json`, `*.yaml`, `*.yml`), recursively,
 * sorted, read by name only: skips node_modules, dot-folders and paths the folder's `.hatcheryignore`
 * excludes. A loader that skips results marked `notHatchery` needs nothing more (the server does).
 */
export async function listHatcheryFileNames(dir: string, rules?: IgnoreRules): Promise<string[]> {
  const ignore = rules ?? (await ignoreRulesOf(dir));
  const found: string[] = [];
  const walkDir = async (d: string, rel: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true });
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = path.join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!ignore.matches(r, true)) await walkDir(p, r);
      } else if (e.isFile() && isHatcheryFileName(e.name) && !ignore.matches(r, false)) found.push(p);
    }
  };
  await walkDir(dir, '');
  return found.sort();
}
