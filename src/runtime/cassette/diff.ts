/** Most lines a diff shows; a request that differs everywhere is summarised after that. */
const MAX_LINES = 24;

/**
 * A short line diff of two texts (`- ` recorded, `+ ` now), with one line of context around each
 * change and `...` for skipped runs; from the longest common subsequence of lines.
 */
export function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const ops = diffOps(a, b);
  const keep = new Set<number>();
  ops.forEach((op, i) => {
    if (op.tag !== ' ') for (let j = i - 1; j <= i + 1; j++) keep.add(j);
  });
  const lines: string[] = [];
  let skipped = false;
  ops.forEach((op, i) => {
    if (!keep.has(i)) {
      skipped = true;
      return;
    }
    if (skipped && lines.length > 0) lines.push('  ...');
    skipped = false;
    lines.push(`${op.tag} ${op.line}`);
  });
  if (lines.length > MAX_LINES) {
    const more = lines.length - MAX_LINES;
    return [...lines.slice(0, MAX_LINES), `  ... (${more} more lines)`].join('\n');
  }
  return lines.join('\n');
}

/** How many lines differ between two texts (the distance used to find the nearest recorded request). */
export function diffSize(before: string, after: string): number {
  let n = 0;
  for (const op of diffOps(before.split('\n'), after.split('\n'))) if (op.tag !== ' ') n++;
  return n;
}

interface Op {
  tag: ' ' | '-' | '+';
  line: string;
}

/** Edit script of two line lists; long common prefixes and suffixes are cut first to keep the table small. */
function diffOps(a: string[], b: string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf])
    suf++;
  const ma = a.slice(pre, a.length - suf);
  const mb = b.slice(pre, b.length - suf);
  const ops: Op[] = a.slice(0, pre).map((line) => ({ tag: ' ', line }));
  if (ma.length * mb.length > 250_000) {
    // Too big for the table: show it as a replacement of the middle.
    for (const line of ma) ops.push({ tag: '-', line });
    for (const line of mb) ops.push({ tag: '+', line });
  } else {
    const n = ma.length;
    const m = mb.length;
    const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i]![j] = ma[i] === mb[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && ma[i] === mb[j]) {
        ops.push({ tag: ' ', line: ma[i]! });
        i++;
        j++;
      } else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
        ops.push({ tag: '-', line: ma[i]! });
        i++;
      } else {
        ops.push({ tag: '+', line: mb[j]! });
        j++;
      }
    }
  }
  for (const line of a.slice(a.length - suf)) ops.push({ tag: ' ', line });
  return ops;
}
