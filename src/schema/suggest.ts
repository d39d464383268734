/** Longest value quoted whole in an error message; longer ones are cut with "…". */
const QUOTE_LIMIT = 60;
/** Most candidates a suggestion compares against: keeps "did you mean" linear on huge files. */
const SUGGEST_CANDIDATES = 200;
/** Longest word worth suggesting for: names of the format are short, so a long word is no typo of one. */
const SUGGEST_WORD_LIMIT = 64;

/** A value as a JSON string literal, cut to about `limit` characters so no message embeds a huge value. */
export function quote(value: unknown, limit = QUOTE_LIMIT): string {
  const s = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  // Cut before escaping: JSON.stringify of a huge string would be as huge as the string.
  return JSON.stringify(s.length > limit ? `${s.slice(0, limit)}…` : s);
}

/** Up to `limit` names, comma-separated, then how many more there are. */
export function listNames(names: readonly string[] | ReadonlySet<string>, limit = 20): string {
  const shown: string[] = [];
  for (const n of names) {
    if (shown.length >= limit) break;
    shown.push(n.length > QUOTE_LIMIT ? `${n.slice(0, QUOTE_LIMIT)}…` : n);
  }
  const more = ('size' in names ? names.size : names.length) - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

/** Edit distance between two short strings (keys, node names, types); a swap of two letters counts one. */
function editDistance(a: string, b: string): number {
  // Three rows: the optimal-string-alignment distance looks two rows back for transpositions.
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The candidate closest to `word`, if it is close enough to be a plausible typo. Only the first
 * SUGGEST_CANDIDATES candidates are compared, so a file with 100,000 names costs no more than one with 200.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > SUGGEST_WORD_LIMIT) return undefined;
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const lower = word.toLowerCase();
  let seen = 0;
  for (const c of candidates) {
    if (++seen > SUGGEST_CANDIDATES) break;
    if (c.length > SUGGEST_WORD_LIMIT) continue;
    const cl = c.toLowerCase();
    // One word inside the other is close when it starts it ("B" of "Bee") or is at least half of it
    // ("prompt" in "usr_prompt"), not when it is a short common tail ("name" in "tool_name").
    const inside = cl.includes(lower) || lower.includes(cl);
    const half = Math.min(cl.length, lower.length) * 2 >= Math.max(cl.length, lower.length);
    const prefix = cl.startsWith(lower) || lower.startsWith(cl);
    const score = cl === lower ? 0 : inside && (half || prefix) ? 1 : editDistance(lower, cl);
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
  return n ? ` (did you mean ${quote(n)}?)` : '';
}

/** What a value is, in words, for "must be X, not Y". */
export function actualOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return `the text ${quote(value, 40)}`;
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `${value}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** A prompt as a label: without the `: ` a terminal prompt ends with (`Question: ` → `Question`). */
export function promptLabel(prompt: string): string {
  return prompt.replace(/[:\s]+$/, '');
}
