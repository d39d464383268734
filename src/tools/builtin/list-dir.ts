import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { throwIfAborted } from '../../core/cancel.js';
import { HatcheryError } from '../../core/errors.js';
import { openDirChecked } from '../../core/fs/safe-fs.js';
import { defineBuiltin } from './define.js';

/** Most entries list_dir returns; a bigger listing ends with a note. */
const LIST_LIMIT = 2000;
/** Folders a recursive listing does not enter: they are rarely what a model is looking for. */
const SKIP = new Set(['node_modules', '.git']);

/** list_dir: the entries of a folder below the allowed roots, folders marked with a trailing `/`. */
export const listDirTool = defineBuiltin({
  name: 'list_dir',
  description:
    'List the files and folders in a folder (path relative to the hatchery file), one per line; folders end with "/".',
  schema: z.object({
    path: z.string().min(1).default('.').describe('Folder path, relative to the hatchery file (default ".")'),
    recursive: z.boolean().optional().describe('Also list the contents of sub-folders (default false)'),
  }),
  async run({ path: p, recursive }, tc) {
    const where = { node: tc.node, tool: 'list_dir' };
    const root = tc.scope.guard.resolve(tc.scope.hatchery.dir, p, where);
    const check = tc.scope.guard.readCheck(p, root, where);
    const lines: string[] = [];
    let more = false;
    const fail = (err: unknown, rel: string): never => {
      if (err instanceof HatcheryError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such folder' : code === 'ENOTDIR' ? 'not a folder' : (code ?? '');
      throw new HatcheryError(
        'FILE_IO',
        `list_dir: cannot list "${rel || p}": ${why}`,
        { tool: 'list_dir', path: p },
        { cause: err },
      );
    };
    // Each folder is opened, checked on its descriptor and read through it; sub-folders are opened
    // through their parent's descriptor without following links, so a folder swapped for a symlink
    // mid-listing cannot show what lies outside the roots.
    const visit = async (dir: string, rel: string, noFollow: boolean): Promise<void> => {
      throwIfAborted(tc.signal);
      let opened: ReturnType<typeof openDirChecked>;
      try {
        opened = openDirChecked(dir, check, noFollow);
      } catch (err) {
        return fail(err, rel);
      }
      try {
        let entries: Dirent[];
        try {
          entries = await readdir(opened.via, { withFileTypes: true });
        } catch (err) {
          return fail(err, rel);
        }
        entries.sort((a, b) => a.name.localeCompare(b.name));
        for (const e of entries) {
          if (lines.length >= LIST_LIMIT) {
            more = true;
            return;
          }
          const sub = rel ? `${rel}/${e.name}` : e.name;
          // Symlinked folders are listed, never followed: they could lead out of the allowed roots.
          lines.push(e.isDirectory() ? `${sub}/` : sub);
          if (recursive && e.isDirectory() && !SKIP.has(e.name)) {
            await visit(path.join(opened.via, e.name), sub, true);
          }
        }
      } finally {
        opened.close();
      }
    };
    await visit(root, '', false);
    if (more) lines.push(`[listing cut at ${LIST_LIMIT} entries; list a sub-folder to see more]`);
    return lines.length > 0 ? lines.join('\n') : '(empty folder)';
  },
});
