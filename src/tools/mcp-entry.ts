/**
 * MCP server entries at load time: the original Hatchery's form (a URL or a command line), and the
 * folder a stdio server starts in. Apart from the client so that loading a file never loads the MCP
 * client SDK.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { McpServerDef } from '../schema/hatchery.js';

/**
 * A server definition with its working folder made absolute: a stdio server starts in `dir` (the
 * folder of the file that defines it) unless its `cwd` says otherwise, and a relative `cwd` is taken
 * from `dir`, so where it runs never depends on the shell's folder. The absolute cwd is also part of
 * the pool's connection key: one server name in two folders is two processes.
 */
export function anchored(def: McpServerDef, dir: string): McpServerDef {
  if ('url' in def || (def.cwd !== undefined && path.isAbsolute(def.cwd))) return def;
  return { ...def, cwd: def.cwd === undefined ? dir : path.resolve(dir, def.cwd) };
}

/** Why a stdio server's (absolute) working folder cannot be used, or undefined when it can. */
export function cwdProblem(cwd: string): string | undefined {
  try {
    if (statSync(cwd).isDirectory()) return undefined;
    return `${cwd} is not a folder`;
  } catch {
    return `the folder ${cwd} does not exist`;
  }
}

/**
 * Problems of the `cwd` of servers defined in a file in `dir` (a hatchery or an --mcp-config file),
 * each at `mcpServers/<name>/cwd` (the caller's report names the file). Checked when the file is
 * read, since a `cwd` is constant.
 */
export function serverCwdProblems(
  servers: Readonly<Record<string, McpServerDef>> | undefined,
  dir: string,
): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  for (const [name, def] of Object.entries(servers ?? {})) {
    if ('url' in def || def.cwd === undefined) continue;
    const why = cwdProblem(path.resolve(dir, def.cwd));
    if (why) {
      problems.push({
        path: `mcpServers/${name}/cwd`,
        message: `MCP server "${name}" cannot start in its cwd "${def.cwd}": ${why}; create the folder or fix "cwd" (a relative cwd is taken from ${dir}, the folder of the file that defines the server)`,
      });
    }
  }
  return problems;
}

/**
 * Splits a command line into argv the way a POSIX shell would, without running one: whitespace,
 * single and double quotes and backslashes. Shell operators are refused rather than passed on literally.
 */
export function splitCommandLine(line: string): string[] | { error: string } {
  const argv: string[] = [];
  let cur = '';
  let inToken = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else cur += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && '"\\$`'.includes(line[i + 1] ?? '')) cur += line[++i];
      else cur += ch;
    } else if (/\s/.test(ch)) {
      if (inToken) argv.push(cur);
      cur = '';
      inToken = false;
    } else {
      inToken = true;
      if (ch === "'" || ch === '"') quote = ch;
      else if (ch === '\\') cur += line[++i] ?? '';
      else if (';|&<>`'.includes(ch) || (ch === '$' && line[i + 1] === '(')) {
        return {
          error: `"${ch}" is shell syntax, but the command runs without a shell (no pipes, redirections or command lists); quote it if it is meant literally, or wrap the pipeline in a script`,
        };
      } else cur += ch;
    }
  }
  if (quote) return { error: `unterminated ${quote} quote` };
  if (inToken) argv.push(cur);
  return argv;
}

/**
 * The server of an entry of a drone's `mcp` list (the original Hatchery's form): an http(s) URL, or
 * a command line, optionally after NAME=value assignments, started in `dir`.
 */
export function parseServerEntry(entry: string, dir: string): McpServerDef | { error: string } {
  const text = entry.trim();
  if (/^https?:\/\//i.test(text)) {
    try {
      return { url: new URL(text).href };
    } catch {
      return { error: `"${text}" is not a valid URL` };
    }
  }
  const argv = splitCommandLine(text);
  if ('error' in argv) return argv;
  const env: Record<string, string> = {};
  while (argv.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0]!)) {
    const kv = argv.shift()!;
    const eq = kv.indexOf('=');
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const [command, ...args] = argv;
  if (!command) return { error: 'empty command line: give a program and its arguments, or an http(s) URL' };
  return Object.keys(env).length > 0 ? { command, args, env, cwd: dir } : { command, args, cwd: dir };
}
