/**
 * The three-drone chain of the durable-run tests, and a fake model script for it whose step B can be
 * held, so that a test can stop or kill a server while a run waits there.
 */
import type { FakeOpenAI } from '../fakes/fake-openai.js';
import { lastUserText, type WireBody } from '../fakes/http.js';

/** A three-drone chain; node B's prompt is recognisable so a test can hold it. */
export const chain = {
  name: 'chain',
  desc: 'three steps',
  nodes: [
    { name: 'A', usr_prompt: 'step A of {{ ctx.input }}', next: 'B' },
    { name: 'B', usr_prompt: 'step B after {{ out.A }}', next: 'C' },
    { name: 'C', usr_prompt: 'step C after {{ out.B }}' },
  ],
};

/** Makes `openai` reply "done <step>" to every request, holding step B for `holdB` ms. */
export function scriptChain(openai: FakeOpenAI, holdB: number): void {
  openai.reset();
  const reply = (body: WireBody) => {
    const step = /step (\w)/.exec(lastUserText(body.messages))?.[1] ?? '?';
    return step === 'B' && holdB > 0 ? { text: `done ${step}`, delayMs: holdB } : { text: `done ${step}` };
  };
  for (let i = 0; i < 50; i++) openai.enqueue(reply);
}

/** Requests `openai` received for a step of the chain. */
export function chainCallsFor(openai: FakeOpenAI, step: string): number {
  return openai.requests.filter((r) => lastUserText(r.body?.messages).startsWith(`step ${step}`)).length;
}
