/** A word for a POSIX shell (or cmd/PowerShell on Windows): quoted only when it needs it. */
export function shellQuote(word: string, platform: NodeJS.Platform = process.platform): string {
  if (/^[A-Za-z0-9_\-./:=@%+,]+$/.test(word)) return word;
  if (platform === 'win32') return `"${word.replace(/"/g, '""')}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
