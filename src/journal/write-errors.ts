import path from 'node:path';

/** The errno codes already reported by this process: a full disk is said once, not once per record. */
const reported = new Set<string>();

/**
 * Reports a failed journal write on stderr, once per kind of failure (errno code) per process, with
 * the folder and what to do: the run goes on, its journal is incomplete. A full disk was silent.
 */
export function journalWriteFailed(file: string, err: unknown): void {
  const text = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const kind = typeof code === 'string' ? code : (/\b(E[A-Z0-9]{2,})\b/.exec(text)?.[1] ?? 'EIO');
  if (reported.has(kind)) return;
  reported.add(kind);
  process.stderr.write(
    `hatchery-mcp: writing the run journal in ${path.dirname(file)} failed (${kind}: ${text.split('\n')[0]}); runs go on, but their journals are incomplete: check that disk (full, read-only, hung), or choose another folder with --state DIR\n`,
  );
}
