import path from 'node:path';
import type { ValidationProblem } from '../core/errors.js';
import { END, IDENTIFIER, lookupExpr } from '../schema/names.js';
import { promptLabel } from '../schema/suggest.js';

/**
 * The spellings of the YAML multi-agent design (nodes with `id` and `type: category.type`, `::`
 * paths, `{{ node }}` templates), mapped onto the node kinds of this format. Every node keeps its
 * index, so a problem's path points at the node the user wrote; `sourcePath` maps renamed keys back.
 */

/** The design's node types this format understands. */
export const DESIGN_TYPES: ReadonlySet<string> = new Set([
  'agent.completion',
  'trigger.stdin',
  'trigger.file',
  'event.stdout',
  'event.file',
  'scenario.termination',
  'scenario.terminate',
  'scenario.entry',
]);

/** `next` spellings that end the run. */
const TERMINATION = new Set([
  'scenario.termination',
  'scenario.terminate',
  'scenario::termination',
  'scenario::terminate',
]);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A `type` in either spelling (`agent.completion`, `::agent::completion`) as `category.type`. */
function designType(t: unknown): string | undefined {
  if (typeof t !== 'string') return undefined;
  const s = t.replace(/^::/, '').replaceAll('::', '.');
  return DESIGN_TYPES.has(s) ? s : undefined;
}

/** True when a parsed file uses the design's spellings (then `fromDesign` maps it). */
export function isDesign(raw: unknown): boolean {
  if (!isObj(raw) || !Array.isArray(raw.nodes)) return false;
  return raw.nodes.some(
    (n) =>
      isObj(n) &&
      (designType(n.type) !== undefined ||
        Object.hasOwn(n, 'id') ||
        Object.hasOwn(n, 'provider') ||
        (typeof n.next === 'string' && n.next.includes('::'))),
  );
}

/** A design path naming a node (`::nodes::x`, `nodes::x`, `x`) as its name; termination as END. */
function nodeTarget(p: unknown): unknown {
  if (typeof p !== 'string') return p;
  const s = p.replace(/^::/, '');
  if (TERMINATION.has(s)) return END;
  return s.startsWith('nodes::') ? s.slice('nodes::'.length) : s;
}

/**
 * Rewrites the design's template references to this format's: `::output::x` and `output::x` become
 * `out.x`, a bare node name inside `{{ }}` or `{% %}` becomes `out.<name>`. Text outside tags is kept.
 */
export function designTemplate(source: string, names: ReadonlySet<string>): string {
  return source.replace(
    /(\{\{|\{%)([\s\S]*?)(\}\}|%\})/g,
    (_m, open: string, body: string, close: string) => {
      let b = body.replace(
        /(?<![\w.])(?:::)?output::([A-Za-z_][\w-]*)((?:::[A-Za-z_]\w*)*)/g,
        (_x, n: string, rest: string) => `${lookupExpr('out', n)}${rest.replaceAll('::', '.')}`,
      );
      // Only node names, only where a variable may stand: not after ".", a quote or a filter bar.
      b = b.replace(/(?<![\w.'"-]|\|\s*)([A-Za-z_][\w-]*)(?![\w-]|\s*\()/g, (w: string) =>
        names.has(w) ? lookupExpr('out', w) : w,
      );
      return `${open}${b}${close}`;
    },
  );
}

/** Splits a command line into argv like a shell would for plain words and quotes (nothing is expanded). */
export function splitCommand(cmd: string): string[] {
  const argv: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(cmd); m; m = re.exec(cmd)) {
    argv.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  }
  return argv;
}

/** The result of mapping a design file: the definition in this format and the path map back. */
export interface DesignMapped {
  value: Obj;
  problems: ValidationProblem[];
  /** The path the user wrote for a path of the mapped definition. */
  sourcePath(p: string): string;
}

/** Maps a file in the design's shape onto this format; `file` names the hatchery when it has no name. */
export function fromDesign(raw: Obj, file: string): DesignMapped {
  const problems: ValidationProblem[] = [];
  const renames = new Map<string, string>();
  const rawNodes = raw.nodes as unknown[];
  const idOf = (n: unknown) => (isObj(n) ? (n.id ?? n.name) : undefined);
  const names = new Set(rawNodes.map(idOf).filter((n): n is string => typeof n === 'string'));
  const top: Obj = { ...raw };
  if (Object.hasOwn(top, 'id') && !Object.hasOwn(top, 'name')) {
    top.name = top.id;
    delete top.id;
    renames.set('name', 'id');
  }
  if (top.name === undefined) {
    const base = path.basename(file).replace(/\.(ya?ml|json)$/i, '');
    top.name = base.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'workflow';
  }
  if (top.desc === undefined && top.description === undefined)
    top.desc = `Runs the ${String(top.name)} workflow`;
  providerModel(top, '', problems);
  if (typeof top.start === 'string') top.start = nodeTarget(top.start);

  // Who leads to each node: an output node's input is the output of the node before it.
  const preds = new Map<string, string[]>();
  for (const n of rawNodes) {
    if (!isObj(n)) continue;
    const from = idOf(n);
    const next = Array.isArray(n.next) ? n.next : [n.next];
    for (const t of next.map(nodeTarget)) {
      if (typeof t !== 'string' || typeof from !== 'string') continue;
      preds.set(t, [...(preds.get(t) ?? []), from]);
    }
  }
  const typeOf = new Map<unknown, string | undefined>(
    rawNodes.map((n) => [idOf(n), isObj(n) ? designType(n.type) : undefined]),
  );
  // The text a node hands on: an event.file's is the text it wrote, not its tool's `wrote N bytes`.
  const handedOn = (from: string, seen = new Set<string>()): string => {
    const before = preds.get(from) ?? [];
    if (typeOf.get(from) !== 'event.file' || before.length !== 1 || seen.has(from))
      return `{{ ${lookupExpr('out', from)} }}`;
    seen.add(from);
    return handedOn(before[0]!, seen);
  };
  let stdinTaken = false;
  const inputs: Obj = isObj(top.inputs) ? { ...top.inputs } : {};
  top.nodes = rawNodes.map((n, i) => {
    if (!isObj(n)) return n;
    const at = `nodes/${i}`;
    const node: Obj = { ...n };
    const id = node.id;
    if (Object.hasOwn(node, 'id')) {
      if (Object.hasOwn(node, 'name'))
        problems.push({ path: `${at}/id`, message: '"id" and "name" mean the same thing; keep one' });
      else node.name = id;
      delete node.id;
      renames.set(`${at}/name`, `${at}/id`);
    }
    if (node.next !== undefined)
      node.next = Array.isArray(node.next) ? node.next.map(nodeTarget) : nodeTarget(node.next);
    for (const k of ['agent_reuse', 'conversation', 'on_limit'])
      if (typeof node[k] === 'string') node[k] = nodeTarget(node[k]);
    for (const k of [
      'system_message',
      'user_message',
      'sys_prompt',
      'usr_prompt',
      'prefix',
      'path',
      'write_output',
    ])
      if (typeof node[k] === 'string') node[k] = designTemplate(node[k], names);
    const name = typeof node.name === 'string' ? node.name : `node_${i + 1}`;
    const input = (kind: string): string | undefined => {
      const from = preds.get(name) ?? [];
      if (from.length === 1) return handedOn(from[0]!);
      if (kind === 'scenario.termination' || kind === 'scenario.terminate' || kind === 'scenario.entry')
        return '';
      problems.push({
        path: `${at}/type`,
        message: `an ${kind} node takes the output of the node before it, but ${from.length === 0 ? 'no node has' : `${from.length} nodes (${from.join(', ')}) have`} "next: ${name}"`,
        fix: 'let exactly one node lead to it (give each branch its own output node)',
      });
      return undefined;
    };
    const kind = designType(node.type);
    const tool = (toolName: string, args: Obj, from: Record<string, string>) => {
      node.type = 'tool';
      node.tool_name = toolName;
      node.tool_args = args;
      renames.set(`${at}/tool_name`, `${at}/type`);
      for (const [to, src] of Object.entries(from)) renames.set(`${at}/tool_args/${to}`, `${at}/${src}`);
    };
    switch (kind) {
      case 'agent.completion':
        delete node.type;
        providerModel(node, at, problems);
        break;
      case 'trigger.stdin': {
        const prompt = node.prompt;
        delete node.prompt;
        if (typeof prompt === 'string' && node.desc === undefined) node.desc = prompt;
        // The first stdin is the run's input (stdin, --input, the tool's "input"); later ones are named inputs.
        if (!stdinTaken) {
          stdinTaken = true;
          // Shown when the CLI asks for the input on a terminal, and the MCP tool's input description.
          if (typeof prompt === 'string' && prompt.trim() !== '' && top.input_prompt === undefined) {
            top.input_prompt = prompt;
            renames.set('input_prompt', `${at}/prompt`);
          }
          tool('echo', { text: '{{ ctx.input }}' }, {});
        } else if (!IDENTIFIER.test(name)) {
          problems.push({
            path: `${at}/id`,
            message: `a second trigger.stdin becomes the declared input "${name}", which must be an identifier (letters, digits, _)`,
          });
        } else {
          inputs[name] = typeof prompt === 'string' ? promptLabel(prompt) : name;
          renames.set(`inputs/${name}`, `${at}/id`);
          tool('echo', { text: `{{ ctx.${name} }}` }, {});
        }
        break;
      }
      case 'trigger.file':
        tool('read_file', { path: node.path }, { path: 'path' });
        delete node.path;
        break;
      case 'event.stdout':
      case 'event.file': {
        const text = input(kind);
        // Reported above; a placeholder keeps the node from being reported again as an unknown type.
        if (text === undefined) tool('echo', { text: '' }, {});
        else if (kind === 'event.file')
          tool('write_file', { path: node.path, content: text }, { path: 'path' });
        else {
          const prefix = typeof node.prefix === 'string' ? node.prefix : '';
          tool('echo', { text: `${prefix}${text}` }, { text: 'prefix' });
        }
        if (kind === 'event.file') delete node.path;
        else delete node.prefix;
        break;
      }
      case 'scenario.termination':
      case 'scenario.terminate':
      case 'scenario.entry':
        tool('echo', { text: input(kind) ?? '' }, {});
        if (kind !== 'scenario.entry') node.next = END;
        break;
      default:
        if (node.type === undefined || node.type === 'ai' || node.type === 'drone')
          providerModel(node, at, problems);
        if (node.type === 'script' && typeof node.cmd === 'string') {
          node.cmd = splitCommand(node.cmd);
          renames.set(`${at}/cmd`, `${at}/cmd!`);
        }
    }
    return node;
  });
  if (Object.keys(inputs).length > 0) top.inputs = inputs;
  return {
    value: top,
    problems,
    sourcePath(p) {
      for (let cut = p.length; cut > 0; cut = p.lastIndexOf('/', cut - 1)) {
        const mapped = renames.get(p.slice(0, cut));
        // A "!" mapping stands for the whole value (a command line split into argv elements).
        if (mapped !== undefined) return mapped.endsWith('!') ? mapped.slice(0, -1) : mapped + p.slice(cut);
      }
      return p;
    },
  };
}

/** `provider` + `model` of a drone or of the top level (`at` ''), as `model: "provider:model"`. */
function providerModel(obj: Obj, at: string, problems: ValidationProblem[]): void {
  if (!Object.hasOwn(obj, 'provider')) return;
  const { provider, model } = obj;
  delete obj.provider;
  const path = at ? `${at}/provider` : 'provider';
  if (typeof provider !== 'string' || provider === '') {
    problems.push({ path, message: 'provider must be a name such as "openai" or "anthropic"' });
    return;
  }
  if (typeof model !== 'string') {
    problems.push({
      path,
      message: `provider "${provider}" needs a model`,
      fix: 'add e.g. "model: gpt-4o-mini" next to it',
    });
    return;
  }
  obj.model = model.startsWith(`${provider}:`) ? model : `${provider}:${model}`;
}
