// Google ADK JS: a SequentialAgent of n LlmAgents; each agent's instruction reads the previous
// agent's output from session state ({N3}) and a fake BaseLlm answers at once (no I/O).
import { BaseLlm, InMemoryRunner, LlmAgent, SequentialAgent } from '@google/adk';
import { sizes, timeChain } from './common.mjs';

class FakeLlm extends BaseLlm {
  constructor() {
    super({ model: 'fake' });
  }
  async *generateContentAsync() {
    yield { content: { role: 'model', parts: [{ text: 'ok' }] } };
  }
  async connect() {
    throw new Error('not used');
  }
}

const llm = new FakeLlm();
for (const n of sizes()) {
  const subAgents = Array.from(
    { length: n },
    (_, i) =>
      new LlmAgent({
        name: `N${i}`,
        model: llm,
        instruction: i === 0 ? 'Start' : `Continue from {N${i - 1}}`,
        outputKey: `N${i}`,
        // Like a drone, each agent sees its own prompt, not the whole session so far.
        includeContents: 'none',
      }),
  );
  const agent = new SequentialAgent({ name: 'chain', subAgents });
  const runner = new InMemoryRunner({ agent, appName: 'bench' });
  let k = 0;
  await timeChain('adk', n, async () => {
    const session = await runner.sessionService.createSession({ appName: 'bench', userId: 'u' });
    const newMessage = { role: 'user', parts: [{ text: `go ${k++}` }] };
    for await (const _ of runner.runAsync({
      userId: 'u',
      sessionId: session.id,
      newMessage,
      runConfig: { maxLlmCalls: n + 10 },
    })) {
      // drain
    }
  });
}
