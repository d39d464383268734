import { z } from 'zod';
import { HatcheryError } from '../../core/errors.js';
import { defineBuiltin } from './define.js';

/** Largest file read_file returns whole; bigger files are an error rather than a flood of tokens. */
const READ_LIMIT_BYTES = 1_000_000;

function ioError(err: unknown, tool: string, p: string): HatcheryError {
  const e = err as NodeJS.ErrnoException;
  const why =
    e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a folder' : (e.code ?? e.message);
  return new HatcheryError(
    'FILE_IO',
    `${tool}: cannot access "${p}": ${why}`,
    { tool, path: p },
    { cause: err },
  );
}

/** read_file: returns a UTF-8 text file below the read roots (checked on the opened file). */
export const readFileTool = defineBuiltin({
  name: 'read_file',
  description: 'Read a UTF-8 text file (path relative to the hatchery file) and return its content.',
  schema: z.object({ path: z.string().min(1).describe('File path, relative to the hatchery file') }),
  async run({ path: p }, tc) {
    const { scope } = tc;
    const where = { node: tc.node, tool: 'read_file' };
    try {
      return await scope.guard.readText(scope.hatchery.dir, p, where, {
        signal: tc.signal,
        maxBytes: READ_LIMIT_BYTES,
        tooBig: (size) =>
          new HatcheryError(
            'FILE_IO',
            `read_file: "${p}" is ${size} bytes, over the ${READ_LIMIT_BYTES} byte limit`,
            { tool: 'read_file', path: p },
          ),
      });
    } catch (err) {
      if (err instanceof HatcheryError) throw err;
      throw ioError(err, 'read_file', p);
    }
  },
});

/** write_file: writes (or appends) a text file where the write policy allows, creating folders. */
export const writeFileTool = defineBuiltin({
  name: 'write_file',
  description: 'Write text to a file (path relative to the hatchery file), creating folders as needed.',
  schema: z.object({
    path: z.string().min(1).describe('File path, relative to the hatchery file'),
    content: z.string().describe('Text to write'),
    append: z.boolean().optional().describe('Append instead of replacing (default false)'),
  }),
  async run({ path: p, content, append }, tc) {
    const { scope } = tc;
    try {
      await scope.guard.writeText(
        scope.hatchery.dir,
        p,
        content,
        { node: tc.node, tool: 'write_file' },
        { append },
      );
    } catch (err) {
      if (err instanceof HatcheryError) throw err;
      throw ioError(err, 'write_file', p);
    }
    return `${append ? 'appended' : 'wrote'} ${Buffer.byteLength(content)} bytes to ${p}`;
  },
});

/** echo: returns its text; handy for banelings that only shape text with a template. */
export const echoTool = defineBuiltin({
  name: 'echo',
  description: 'Return the given text unchanged.',
  schema: z.object({ text: z.string().describe('Text to return') }),
  instant: true,
  async run({ text }) {
    return text;
  },
});
