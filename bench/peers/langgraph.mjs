// LangGraph JS: a StateGraph of n nodes in a line; each node asks a fake chat model (LangChain's
// FakeListChatModel, no I/O) to continue from the previous node's text, as a hatchery drone does.
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { sizes, timeChain } from './common.mjs';

const State = Annotation.Root({ text: Annotation({ reducer: (_a, b) => b, default: () => '' }) });
const model = new FakeListChatModel({ responses: ['ok'] });

for (const n of sizes()) {
  const g = new StateGraph(State);
  for (let i = 0; i < n; i++) {
    g.addNode(`N${i}`, async (s) => {
      const reply = await model.invoke([['human', `Continue from ${s.text}`]]);
      return { text: String(reply.content) };
    });
  }
  g.addEdge(START, 'N0');
  for (let i = 0; i < n - 1; i++) g.addEdge(`N${i}`, `N${i + 1}`);
  g.addEdge(`N${n - 1}`, END);
  const app = g.compile();
  await timeChain('langgraph', n, () => app.invoke({ text: 'go' }, { recursionLimit: n + 10 }));
}
