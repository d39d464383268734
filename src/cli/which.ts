import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';

/** True when `file` is a file this process may run. */
async function runnable(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    if (process.platform !== 'win32') await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where a command would be found when spawned without a shell: a command with a path separator
 * relative to `cwd`, any other on `PATH` (with the extensions of PATHEXT on Windows), or undefined.
 */
export async function findCommand(
  command: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string | undefined> {
  const exts =
    process.platform === 'win32'
      ? ['', ...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)]
      : [''];
  if (command.includes('/') || (process.platform === 'win32' && command.includes('\\'))) {
    const abs = path.resolve(cwd, command);
    for (const ext of exts) if (await runnable(abs + ext)) return abs + ext;
    return undefined;
  }
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  for (const d of dirs)
    for (const ext of exts) {
      const candidate = path.join(path.resolve(cwd, d), command + ext);
      if (await runnable(candidate)) return candidate;
    }
  return undefined;
}
