/** Edit distance between two short strings (keys, node names, types). */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** The candidate closest to `word`, if it is close enough to be a plausible typo. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const lower = word.toLowerCase();
  for (const c of candidates) {
    const cl = c.toLowerCase();
    const score = cl === lower ? 0 : cl.includes(lower) || lower.includes(cl) ? 1 : editDistance(lower, cl);
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
  // A one-letter word is "close" to every other one-letter word: require the distance to be
  // smaller than the word itself, and about a third of its length at most.
  const limit = Math.max(1, Math.floor(word.length / 3));
  return best !== undefined && bestScore <= limit && bestScore < word.length ? best : undefined;
}

/** "; did you mean "x"?" or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const n = nearest(word, candidates);
  return n ? ` (did you mean "${n}"?)` : '';
}
