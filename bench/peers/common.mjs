// Shared by the peer harnesses: one round's timing and the median, so every framework is measured
// the same way (warm-up runs, then the median of the timed runs, µs per node).

/** The median of a sample. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Times `run()` (one whole chain of n nodes) and prints `<label> <n> <µs per node>`. */
export async function timeChain(label, n, run, { warmup = 3, runs = n >= 5000 ? 5 : 15 } = {}) {
  for (let i = 0; i < warmup; i++) await run();
  const per = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run();
    per.push(((performance.now() - t0) * 1000) / n);
  }
  const us = median(per);
  console.log(`${label}\t${n}\t${us.toFixed(2)}`);
  return us;
}

/** The chain sizes from the command line (`node x.mjs 100 1000`), 1,000 by default. */
export function sizes() {
  const ns = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  return ns.length ? ns : [1000];
}
