import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseJson } from '../../src/loader/parse.js';
import { isYamlFile, parseYaml } from '../../src/loader/yaml.js';

/** Where the repo's hatchery files live. */
const root = path.resolve(import.meta.dirname, '../..');

function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesBelow(p));
    else if (/\.(json|ya?ml)$/.test(name)) out.push(p);
  }
  return out;
}

/** Parsed values (and texts) of every hatchery-looking file and docs code block of the repo. */
export function corpus(): { where: string; file: string; text: string; value: unknown }[] {
  const found: { where: string; file: string; text: string; value: unknown }[] = [];
  for (const dir of ['test', 'hatchery', 'bench']) {
    for (const file of filesBelow(path.join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      const parsed = isYamlFile(file) ? parseYaml(text) : parseJson(text);
      if (!parsed.problem) found.push({ where: file, file, text, value: parsed.value });
    }
  }
  for (const md of ['README.md', ...readdirSync(path.join(root, 'docs')).map((f) => `docs/${f}`)]) {
    if (!md.endsWith('.md')) continue;
    const text = readFileSync(path.join(root, md), 'utf8');
    for (const m of text.matchAll(/```(json|yaml)\n([\s\S]*?)```/g)) {
      const [lang, text] = [m[1]!, m[2]!];
      const parsed = lang === 'json' ? parseJson(text) : parseYaml(text);
      const file = path.join(root, `docs-example.${lang}`);
      if (!parsed.problem) found.push({ where: md, file, text, value: parsed.value });
    }
  }
  return found.filter(
    ({ value }) => value !== null && typeof value === 'object' && Object.hasOwn(value, 'nodes'),
  );
}
