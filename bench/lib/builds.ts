import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A build an in-process benchmark times: its dist/ folder, or undefined for this tree's sources. */
export interface Build {
  readonly label: string;
  readonly dist: string | undefined;
}

/**
 * The builds to time: this tree's dist/ when built, else its sources through tsx (which measured slower:
 * tsx keeps function names with a call per closure made, 3.5 against 2.2 µs/node with the journal on),
 * then every `--base DIST` of the command line, in order.
 */
export function buildsToTime(): Build[] {
  const ownDist = fileURLToPath(new URL('../../dist', import.meta.url));
  const built = existsSync(path.join(ownDist, 'runtime/runtime.js'));
  if (!built)
    console.log('no dist/ here: timing the sources through tsx (run `npm run build` to time the built code)');
  const builds: Build[] = [
    { label: built ? 'this tree (dist)' : 'this tree (sources)', dist: built ? ownDist : undefined },
  ];
  process.argv.forEach((a, i) => {
    const dist = process.argv[i + 1];
    if (a === '--base' && dist) builds.push({ label: `base ${dist}`, dist: path.resolve(dist) });
  });
  return builds;
}

/** The repository root, where `--import tsx` resolves. */
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `script --child DIST SIZE ...extra` once per build, size and round, in a process of its own
 * (fresh module state), a different build first from round to round so drift falls on all alike; the
 * child prints its result as the last line of JSON. Results by build label and size, in round order.
 */
export function childRounds<T>(
  script: string,
  builds: readonly Build[],
  sizes: readonly number[],
  rounds: number,
  extra: readonly string[] = [],
): (b: Build, size: number) => T[] {
  const results = new Map<string, T[]>();
  for (let round = 0; round < rounds; round++) {
    for (const size of sizes) {
      const order = builds.map((_, k) => builds[(k + round) % builds.length]!);
      for (const b of order) {
        const r = spawnSync(
          process.execPath,
          ['--import', 'tsx', script, '--child', b.dist!, String(size), ...extra],
          { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
        );
        if (r.status !== 0) throw new Error(`the child of ${b.label} failed (${r.status})`);
        const key = `${b.label}\0${size}`;
        results.set(key, [...(results.get(key) ?? []), JSON.parse(r.stdout.trim().split('\n').pop()!) as T]);
      }
    }
  }
  return (b, size) => results.get(`${b.label}\0${size}`) ?? [];
}
