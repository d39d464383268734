/**
 * Every run of a loaded file starts its journal with the file's node hashes; the journal cleans that
 * map once per secret list and reuses it. Runs of the same file in stores with other secrets must
 * still get the map cleaned of their own secrets, and resume must still see the hashes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRunStore } from '../../src/journal/file-store.js';
import { definitionHashes } from '../../src/journal/run-meta.js';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { hatch, load, tempDir } from '../helpers.js';

describe('the first record of each run', () => {
  it('holds the node hashes cleaned of its own store’s secrets, run after run', async () => {
    const dir = tempDir('hatchery-run-start-');
    const h = load(
      hatch([
        { name: 'A', model: 'openai:m', usr_prompt: 'a', next: 'B' },
        { name: 'B', model: 'openai:m', usr_prompt: 'b' },
      ]),
      dir,
    );
    const hashes = definitionHashes(h).nodes;
    // A secret that happens to equal one node's hash: that store must redact it, the other not.
    const secretEnv = { MY_TOKEN: hashes.A! };
    const stores = [
      new FileRunStore(path.join(dir, 'with'), { env: secretEnv }),
      new FileRunStore(path.join(dir, 'without'), { env: {} }),
    ];
    const runtimes = stores.map(
      (store, i) =>
        new Runtime({
          providers: { openai: new ScriptedProvider(() => 'ok') },
          env: i === 0 ? secretEnv : {},
          store,
          cwd: dir,
        }),
    );
    for (let round = 0; round < 3; round++) {
      for (const [i, runtime] of runtimes.entries()) {
        const r = await runtime.run(h, { input: 'go' });
        await stores[i]!.idle();
        const first = JSON.parse(
          readFileSync(path.join(stores[i]!.location, `${r.runId}.jsonl`), 'utf8').split('\n')[0]!,
        ) as { type: string; nodes: Record<string, string> };
        expect(first.type).toBe('run_start');
        expect(first.nodes).toEqual(i === 0 ? { A: '[redacted]', B: hashes.B } : hashes);
      }
    }
    for (const r of runtimes) await r.close();
  });
});
