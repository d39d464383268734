/**
 * The lifecycle of A2A tasks over loopback with the official SDK client: an ask node makes the task
 * input-required with the question, the next message on the task answers it and the run goes on; a
 * budget stop fails the task with the reason; CancelTask cancels the run (its model call stops) and
 * the task ends canceled; a bad message is an A2A error naming what is right, never a task.
 */
import { TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { fakeEnv, hatcheryDir, REVIEW_DEF, waitFor, writeHatchery } from '../mcp/helpers.js';
import {
  ASK_COLOUR,
  artifactText,
  collect,
  type Served,
  send,
  serveA2a,
  states,
  statusText,
  TOKEN,
  updateTexts,
  userMessage,
  v1Client,
} from './helpers.js';

const { openai, anthropic } = fakeVendors();

/** The id and context of the task a stream's first event carries. */
function taskOf(events: Awaited<ReturnType<typeof collect>>): { id: string; contextId: string } {
  const first = events[0]?.payload;
  if (first?.$case !== 'task') throw new Error(`the stream began with ${first?.$case}`);
  return { id: first.value.id, contextId: first.value.contextId };
}

describe('A2A task lifecycle', () => {
  let served: Served;

  beforeAll(async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'review.json', REVIEW_DEF);
    writeHatchery(dir, 'frugal.json', {
      name: 'frugal',
      desc: 'two model calls on a budget of one',
      budget: { model_calls: 1 },
      nodes: [
        { name: 'One', usr_prompt: '{{ ctx.input }}', next: 'Two' },
        { name: 'Two', usr_prompt: 'again' },
      ],
    });
    writeHatchery(dir, 'slow.json', {
      name: 'slow',
      desc: 'one slow model call',
      nodes: [{ name: 'Slow', usr_prompt: '{{ ctx.input }}' }],
    });
    served = await serveA2a(dir, { env: fakeEnv(`${openai.url}/v1`, anthropic.url) });
  });

  afterAll(async () => {
    await served?.stop();
  });

  it('asks: input-required with the question, then the next message answers and the task completes', async () => {
    openai.enqueue({ text: 'a poem' });
    const client = await v1Client(`${served.origin}/a2a/review/`);
    const first = await collect(client.sendMessageStream(send(userMessage({ text: 'spring' }))));
    expect(states(first).at(-1)).toBe('INPUT_REQUIRED');
    expect(updateTexts(first).at(-1)).toContain('node "Pick" asks: Ship "a poem"?');
    expect(updateTexts(first).at(-1)).toContain('choices: yes, no');
    const task = taskOf(first);
    const waiting = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const calls = openai.requests.length;
    const second = await collect(
      client.sendMessageStream(
        send(userMessage({ text: 'yes', taskId: task.id, contextId: task.contextId })),
      ),
    );
    expect(states(second).at(-1)).toBe('COMPLETED');
    expect(updateTexts(second).some((t) => t.includes('node "Say" done'))).toBe(true);
    const done = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(artifactText(done)).toBe('a poem: yes');
    // The draft came from the journal: the model was not called again.
    expect(openai.requests.length).toBe(calls);
  });

  it('keeps a task waiting when an answer is refused, saying why and asking again, secrets redacted', async () => {
    // The question quotes the draft, and the draft here holds the server's token.
    openai.enqueue({ text: `a poem for ${TOKEN}` });
    const client = await v1Client(`${served.origin}/a2a/review/`);
    const first = await collect(client.sendMessageStream(send(userMessage({ text: 'autumn' }))));
    expect(states(first).at(-1)).toBe('INPUT_REQUIRED');
    expect(updateTexts(first).at(-1)).toContain('Ship "a poem for [redacted]"?');
    const task = taskOf(first);
    const refused = await collect(
      client.sendMessageStream(
        send(userMessage({ text: 'maybe', taskId: task.id, contextId: task.contextId })),
      ),
    );
    expect(states(refused).at(-1)).toBe('INPUT_REQUIRED');
    const said = updateTexts(refused).at(-1) ?? '';
    expect(said).toContain('"maybe"');
    expect(said).toContain('choices: yes, no');
    expect(said).toContain('Ship "a poem for [redacted]"?');
    expect(JSON.stringify(refused)).not.toContain(TOKEN);
    const answered = await client.sendMessage(
      send(userMessage({ text: 'no', taskId: task.id, contextId: task.contextId })),
    );
    expect(artifactText(answered as never)).toBe('a poem for [redacted]: no');
  });

  it('fails a task its budget stops, with the reason', async () => {
    const client = await v1Client(`${served.origin}/a2a/`);
    const result = await client.sendMessage(send(userMessage({ text: 'hi', skill: 'frugal' })));
    expect('id' in result && result.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const text = statusText((result as { status: Parameters<typeof statusText>[0] }).status);
    expect(text).toContain('BUDGET_EXHAUSTED');
    expect(text).toContain('model_calls');
  });

  it('cancels a task: the run and its model call stop, and the task ends canceled', async () => {
    openai.enqueue({ text: 'never', delayMs: 60_000 });
    const client = await v1Client(`${served.origin}/a2a/slow/`);
    const events: Awaited<ReturnType<typeof collect>> = [];
    const streaming = (async () => {
      for await (const e of client.sendMessageStream(send(userMessage({ text: 'take your time' }))))
        events.push(e);
    })();
    await waitFor(
      () => updateTexts(events).some((t) => t.includes('node "Slow" started')),
      15_000,
      'the node start',
    );
    await waitFor(() => openai.requests.at(-1)?.body?.messages, 15_000, 'the model call');
    const id = taskOf(events).id;
    const cancelled = await client.cancelTask({ tenant: '', id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await streaming;
    expect(states(events).at(-1)).toBe('CANCELED');
    await waitFor(() => openai.requests.at(-1)?.disconnected, 10_000, 'the model call to stop');
    const read = await client.getTask({ tenant: '', id, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('refuses a message that names no skill, an unknown skill, or carries nothing, naming the skills', async () => {
    const client = await v1Client(`${served.origin}/a2a/`);
    await expect(client.sendMessage(send(userMessage({ text: 'hi' })))).rejects.toThrow(
      /name the skill to run.*frugal, review, slow/s,
    );
    await expect(client.sendMessage(send(userMessage({ text: 'hi', skill: 'reveiw' })))).rejects.toThrow(
      /did you mean "review"/,
    );
    await expect(client.sendMessage(send(userMessage({ skill: 'review' })))).rejects.toThrow(
      /no text and no data part/,
    );
    await expect(
      client.sendMessage(send(userMessage({ text: 'x', skill: 'review', data: { constructor: 'y' } }))),
    ).rejects.toThrow(/has no argument "constructor"/);
    await expect(
      client.getTask({ tenant: '', id: '../../etc/passwd', historyLength: undefined }),
    ).rejects.toThrow(/not found/i);
  });
});

describe('cancelling a task that waits for an answer', () => {
  let served: Served;

  beforeAll(async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'ask.json', ASK_COLOUR);
    served = await serveA2a(dir);
  });

  afterAll(async () => {
    await served?.stop();
  });

  it('ends it canceled, in the journal too', async () => {
    const client = await v1Client(`${served.origin}/a2a/`);
    const waiting = (await client.sendMessage(send(userMessage({ text: 'x' })))) as { id: string };
    const cancelled = await client.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const read = await client.getTask({ tenant: '', id: waiting.id, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(
      client.sendMessage(send(userMessage({ text: 'red', taskId: waiting.id, contextId: read.contextId }))),
    ).rejects.toThrow(/ended|terminal/);
  });
});
