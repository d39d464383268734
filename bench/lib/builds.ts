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
