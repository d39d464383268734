/**
 * The HTTP+JSON (REST) binding of the same agents: a v1.0 client that speaks only REST finds it on
 * the card and streams a task; a 0.3 REST client sends, reads and cancels a task that waits for an
 * answer (its cancel posts no body).
 */
import { TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoDef, hatcheryDir, writeHatchery } from '../mcp/helpers.js';
import {
  ASK_COLOUR,
  artifactText,
  collect,
  legacyRestTransport,
  type Served,
  send,
  serveA2a,
  states,
  updateTexts,
  userMessage,
  v1Client,
} from './helpers.js';

describe('A2A over HTTP+JSON', () => {
  let served: Served;

  beforeAll(async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
    writeHatchery(dir, 'ask.json', ASK_COLOUR);
    served = await serveA2a(dir);
  });

  afterAll(async () => {
    await served?.stop();
  });

  it('serves a v1.0 REST client: the stream, the artifact and GetTask', async () => {
    const client = await v1Client(`${served.origin}/a2a/shout/`, undefined, true);
    const events = await collect(client.sendMessageStream(send(userMessage({ text: 'rest' }))));
    expect(updateTexts(events).some((t) => t.includes('node "Echo" done'))).toBe(true);
    expect(states(events).at(-1)).toBe('COMPLETED');
    const id = events[0]?.payload?.$case === 'task' ? events[0].payload.value.id : '';
    const task = await client.getTask({ tenant: '', id, historyLength: undefined });
    expect(artifactText(task)).toBe('!rest');
  });

  it('serves a 0.3 REST client, whose cancel posts no body', async () => {
    const legacy = legacyRestTransport(`${served.origin}/a2a/rest`);
    const waiting = (await legacy.sendMessage(send(userMessage({ text: 'x', skill: 'ask' })))) as {
      id: string;
    };
    const read = await legacy.getTask({ tenant: '', id: waiting.id, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await legacy.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
