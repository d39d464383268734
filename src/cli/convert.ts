import { readFile, writeFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { Document } from 'yaml';
import { HatcheryError } from '../core/errors.js';
import { readFailure } from '../core/fs/safe-fs.js';
import { parseJson } from '../loader/parse.js';
import { isYamlFile, parseYaml } from '../loader/yaml.js';
import { EXIT, parseCommand } from './args.js';
import { printErr } from './print.js';

/** Help text of `hatchery-mcp convert`. */
export const CONVERT_HELP = `Usage: hatchery-mcp convert <file> [-o OUT] [--force]

Turns a JSON hatchery into YAML, or a YAML one (.yaml, .yml) into JSON; the extension of <file>
says which. Multi-line prompts become YAML block scalars (|); "$schema" becomes the YAML editor
line "# yaml-language-server: $schema=..." and back; "_comment" keys stay keys. YAML comments,
anchors and aliases do not survive a conversion to JSON (aliases are written out).

Options:
  -o, --output OUT    write the result to OUT (default: print it on stdout)
  --force             overwrite OUT if it exists
  -h, --help          show this help`;

/** The editor line that gives a YAML file its JSON Schema (the YAML form of "$schema"). */
const MODELINE = /^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$/m;

/** A JSON hatchery's value as YAML text. */
export function jsonToYaml(value: unknown): string {
  let schema: string | undefined;
  let body = value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const { $schema, ...rest } = value as Record<string, unknown>;
    if (typeof $schema === 'string' && !/\s/.test($schema)) {
      schema = $schema;
      body = rest;
    }
  }
  const doc = new Document(body);
  const text = doc.toString({ blockQuote: 'literal', lineWidth: 0, indentSeq: true });
  return schema === undefined ? text : `# yaml-language-server: $schema=${schema}\n${text}`;
}

/** A YAML hatchery's text as JSON text (two-space indent); the schema editor line becomes "$schema". */
export function yamlToJson(text: string, value: unknown): string {
  const schema = MODELINE.exec(text)?.[1];
  let out = value;
  if (schema && value !== null && typeof value === 'object' && !Array.isArray(value) && !('$schema' in value))
    out = { $schema: schema, ...(value as Record<string, unknown>) };
  return `${JSON.stringify(out, null, 2)}\n`;
}

/** `hatchery-mcp convert`: returns the exit code. */
export async function convertCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'convert', CONVERT_HELP, {
    output: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  const file = positionals[0];
  if (!file || positionals.length > 1)
    throw new HatcheryError('USAGE', `convert takes one file\n\n${CONVERT_HELP}`);
  const toJson = isYamlFile(file);
  if (!toJson && !file.toLowerCase().endsWith('.json'))
    throw new HatcheryError('USAGE', `convert: "${file}" is neither .json nor .yaml/.yml`);
  const out = values.output;
  if (out !== undefined && (toJson ? !out.toLowerCase().endsWith('.json') : !isYamlFile(out)))
    throw new HatcheryError(
      'USAGE',
      `convert: ${toJson ? 'a YAML file becomes JSON' : 'a JSON file becomes YAML'}, so the output "${out}" should end in ${toJson ? '.json' : '.yaml or .yml'}`,
    );
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new HatcheryError('NOT_FOUND', `convert: cannot read "${file}": ${readFailure(err)}`);
  }
  const parsed = toJson ? parseYaml(text) : parseJson(text);
  if (parsed.problem) {
    const p = parsed.problem;
    const at = p.line === undefined ? '' : ` (line ${p.line}, column ${p.column})`;
    printErr(`${file}${at}: ${p.message}\n`);
    return EXIT.INVALID;
  }
  const result = toJson ? yamlToJson(text, parsed.value) : jsonToYaml(parsed.value);
  // The result must read back as the same data: YAML's .nan or .inf, for one, have no JSON form (the
  // data alone is compared: a "$schema" from the YAML editor line is no data).
  const back = toJson
    ? JSON.parse(JSON.stringify(parsed.value))
    : JSON.parse(yamlToJson(result, parseYaml(result).value));
  if (!isDeepStrictEqual(back, parsed.value))
    throw new HatcheryError(
      'INVALID_FILE',
      `convert: "${file}" holds values the ${toJson ? 'JSON' : 'YAML'} form cannot keep (such as .nan or .inf); write them as strings`,
    );
  if (out === undefined) {
    // The converted file is the author's own text, meant for a file: kept byte for byte, not cleaned.
    process.stdout.write(result);
    return EXIT.OK;
  }
  try {
    await writeFile(out, result, { flag: values.force ? 'w' : 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new HatcheryError('USAGE', `convert: "${out}" exists; pass --force to overwrite it`);
    throw new HatcheryError('FILE_IO', `convert: cannot write "${out}": ${(err as Error).message}`);
  }
  printErr(`wrote ${out}\n`);
  return EXIT.OK;
}
