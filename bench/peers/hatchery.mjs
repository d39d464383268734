// hatchery-mcp, built (`npm run build` at the repository root): a chain of n drones, each prompt a
// template reading the previous node's output, answered by the scripted provider (no I/O). Journal
// off and nobody listening, as the peers run here; bench/runtime-overhead.ts measures the other modes.
import { loadHatcheryObject, Runtime } from '../../dist/index.js';
import { ScriptedProvider } from '../../dist/testing.js';
import { sizes, timeChain } from './common.mjs';

const model = new ScriptedProvider(() => 'ok', { record: false });
const runtime = new Runtime({ providers: { openai: model }, env: {} });
for (const n of sizes()) {
  const nodes = Array.from({ length: n }, (_, i) => ({
    name: `N${i}`,
    usr_prompt: i === 0 ? '{{ ctx.input }}' : `Continue from {{ out.N${i - 1} }}`,
    ...(i < n - 1 ? { next: `N${i + 1}` } : {}),
  }));
  const loaded = loadHatcheryObject(
    { name: 'chain', desc: 'bench', max_steps: n + 1, nodes },
    '/tmp/chain.json',
  );
  if (!loaded.ok) throw loaded.error;
  await timeChain('hatchery-mcp', n, () => runtime.run(loaded.hatchery, { input: 'go' }));
}
