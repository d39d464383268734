// Mastra: a workflow of n steps chained with .then(); each step builds its prompt from the previous
// step's text and awaits a fake model function (no I/O). Mastra needs Node >= 22.13.
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { z } from 'zod';
import { sizes, timeChain } from './common.mjs';

const fakeModel = async (_prompt) => 'ok';
const text = z.object({ text: z.string() });

for (const n of sizes()) {
  let wf = createWorkflow({ id: `chain_${n}`, inputSchema: text, outputSchema: text });
  for (let i = 0; i < n; i++) {
    wf = wf.then(
      createStep({
        id: `N${i}`,
        inputSchema: text,
        outputSchema: text,
        execute: async ({ inputData }) => ({ text: await fakeModel(`Continue from ${inputData.text}`) }),
      }),
    );
  }
  const workflow = wf.commit();
  await timeChain('mastra', n, async () => {
    const run = await workflow.createRun();
    const result = await run.start({ inputData: { text: 'go' } });
    if (result.status !== 'success') throw new Error(`mastra run ${result.status}`);
  });
}
