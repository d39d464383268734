/** Binary size units a user may write after a number, and their factor. */
const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * A size as a user writes it (`4194304`, `512KiB`, `4 MiB`, `1g`) in bytes, or undefined when it is
 * not one: units are binary, and KB/MB are refused since they read as powers of 1000 too.
 */
export function parseBytes(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const factor = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || factor === undefined) return undefined;
  const n = Math.round(Number(m[1]) * factor);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A byte count in the largest binary unit it is a whole number of: "4 MiB", "512 KiB", "1000 bytes". */
export function formatBinaryBytes(n: number): string {
  for (const [unit, f] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= f && n % f === 0) return `${n / f} ${unit}`;
  }
  return `${n} bytes`;
}
