/**
 * The one environment policy of every child process (script nodes, shell_exec, stdio MCP servers):
 * a short allow-list of the parent's variables, plus what the hatchery file names explicitly.
 * Anything else (tokens, cloud credentials, database URLs, passwords) stays in this process, and so
 * does an allow-listed name that the secret policy calls a secret (`LC_API_TOKEN`).
 */
import { isSecretName } from '../secrets.js';

/** Parent variables every child gets when they are set: what programs need to find things and print. */
export const CHILD_ENV_ALLOW: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'TMPDIR',
  'TEMP',
  'TMP',
];

/** Windows needs these to start programs at all (none holds a secret); names are case-insensitive there. */
export const CHILD_ENV_ALLOW_WINDOWS: readonly string[] = [
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'USERNAME',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'COMMONPROGRAMFILES',
  'PROCESSOR_ARCHITECTURE',
  'NUMBER_OF_PROCESSORS',
  'OS',
];

const WIN = process.platform === 'win32';
const ALLOWED = new Set(WIN ? [...CHILD_ENV_ALLOW, ...CHILD_ENV_ALLOW_WINDOWS] : CHILD_ENV_ALLOW);

/** True when a parent variable may reach child processes without being named by the file. */
export function isAllowedChildVar(name: string): boolean {
  const n = WIN ? name.toUpperCase() : name;
  // LC_ALL, LC_CTYPE...: locale settings, like LANG.
  return (ALLOWED.has(n) || n.startsWith('LC_')) && !isSecretName(n);
}

const WHOLE_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The value a file's `env` entry gives a child: literal text in which `${NAME}` is the parent's NAME.
 * Undefined when the value is only `${NAME}` and the parent has no NAME (the child does not get it);
 * inside longer text an unset NAME is empty.
 */
export function expandEnvValue(
  value: string,
  parent: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  if (!value.includes('${')) return value;
  const whole = WHOLE_REF.exec(value);
  if (whole) return parent[whole[1]!];
  return value.replace(REF, (_, name: string) => parent[name] ?? '');
}

/** The names that `${NAME}` references in `value`, in order (what expandEnvValue would look up). */
export function envRefs(value: string): string[] {
  return [...value.matchAll(REF)].map((m) => m[1]!);
}

/**
 * The environment of a child process: the allow-listed parent variables, then the file's `env`
 * (values expanded by expandEnvValue), which may add or override any variable.
 */
export function childEnv(
  extra?: Readonly<Record<string, string>>,
  parent: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in parent) {
    const v = parent[k];
    if (v !== undefined && isAllowedChildVar(k)) out[k] = v;
  }
  if (extra) {
    for (const k in extra) {
      const v = expandEnvValue(extra[k]!, parent);
      if (v !== undefined) out[k] = v;
    }
  }
  return out;
}
