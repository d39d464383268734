import { HatcheryError } from '../core/errors.js';
import type { CompiledNode, RunContext } from './contracts.js';

/**
 * Appends a node's output and a newline to its write_output file, creating folders. The path is
 * relative to the hatchery's folder and must pass the write policy (write roots, protected folders,
 * never a hatchery file, never through a symlink).
 */
export async function writeOutput(scope: RunContext, node: CompiledNode, text: string): Promise<void> {
  const where = { file: scope.hatchery.file, node: node.name, field: 'write_output' };
  const rel = scope.render(node.writeOutput!);
  try {
    await scope.guard.writeText(scope.hatchery.dir, rel, `${text}\n`, where, { append: true });
  } catch (err) {
    if (err instanceof HatcheryError) throw err;
    throw new HatcheryError('FILE_IO', `cannot write "${rel}": ${(err as Error).message}`, where, {
      cause: err,
    });
  }
}
