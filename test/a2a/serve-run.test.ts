/**
 * A hatchery served with --a2a, driven by the official SDK's clients over loopback: a v1.0 client
 * streams a task (one working update per node start and end, the output artifact, completed), sends
 * a blocking message and reads the task back; a 0.3 client does the same through the SDK's
 * compatibility layer.
 */
import { type Task, TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { echo } from '../helpers.js';
import { fakeEnv, hatcheryDir, writeHatchery } from '../mcp/helpers.js';
import {
  artifactText,
  collect,
  legacyTransport,
  type Served,
  send,
  serveA2a,
  states,
  updateTexts,
  userMessage,
  v1Client,
} from './helpers.js';

const { openai, anthropic } = fakeVendors();

describe('a hatchery as an A2A agent', () => {
  let served: Served;

  beforeAll(async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'story.json', {
      name: 'story',
      desc: 'Writes a story about a topic, then titles it.',
      inputs: { topic: 'What should the story be about?' },
      nodes: [
        {
          name: 'Writer',
          usr_prompt: 'Write about {{ ctx.topic }}: {{ ctx.input }}',
          save_output: 'story',
          next: 'Titler',
        },
        echo('Titler', 'TITLE for {{ ctx.story }}'),
      ],
    });
    writeHatchery(dir, 'rate.json', {
      name: 'rate',
      desc: 'Rates a text.',
      nodes: [
        {
          name: 'Rate',
          usr_prompt: 'rate {{ ctx.input }}',
          output_schema: { type: 'object', properties: { score: { type: 'number' } }, required: ['score'] },
        },
      ],
    });
    served = await serveA2a(dir, { env: fakeEnv(`${openai.url}/v1`, anthropic.url) });
  });

  afterAll(async () => {
    await served?.stop();
  });

  it('streams a task: the task, a working update per node start and end, the artifact, completed', async () => {
    openai.enqueue({ text: 'A lighthouse keeper met a whale.' });
    const client = await v1Client(`${served.origin}/a2a`);
    const events = await collect(
      client.sendMessageStream(
        send(userMessage({ text: 'be brief', data: { topic: 'lighthouses' }, skill: 'story' })),
      ),
    );
    expect(events[0]?.payload?.$case).toBe('task');
    const texts = updateTexts(events);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringContaining('node "Writer" started'),
        expect.stringContaining('node "Writer" done'),
        expect.stringContaining('node "Titler" started'),
        expect.stringContaining('node "Titler" done'),
      ]),
    );
    expect(states(events).at(-1)).toBe('COMPLETED');
    const artifact = events.find((e) => e.payload?.$case === 'artifactUpdate');
    expect(
      artifact?.payload?.$case === 'artifactUpdate' && artifact.payload.value.artifact?.parts[0]?.content,
    ).toEqual({
      $case: 'text',
      value: 'TITLE for A lighthouse keeper met a whale.',
    });
    const taskId = events[0]?.payload?.$case === 'task' ? events[0].payload.value.id : '';
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined } as never);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toBe('TITLE for A lighthouse keeper met a whale.');
    // The model got the declared input from the data part and the text as ctx.input.
    expect(JSON.stringify(openai.requests.at(-1)?.body)).toContain('Write about lighthouses: be brief');
  });

  it('answers a blocking SendMessage with the completed task', async () => {
    openai.enqueue({ text: 'short one' });
    const client = await v1Client(`${served.origin}/a2a/story/`);
    const result = await client.sendMessage(send(userMessage({ text: 'go', data: { topic: 'owls' } })));
    expect('id' in result && result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(result as never)).toBe('TITLE for short one');
  });

  it('gives a JSON output as a data part beside its text', async () => {
    openai.enqueue({ text: '{"score": 3}' });
    const client = await v1Client(`${served.origin}/a2a/rate/`);
    const task = (await client.sendMessage(send(userMessage({ text: 'this poem' })))) as Task;
    expect(task.artifacts[0]?.parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: '{"score":3}' },
      { $case: 'data', value: { score: 3 } },
    ]);
  });

  it('serves a 0.3 client through the compatibility layer', async () => {
    openai.enqueue({ text: 'old client story' });
    const legacy = legacyTransport(`${served.origin}/a2a`);
    const events = await collect(
      legacy.sendMessageStream(send(userMessage({ text: 'x', data: { topic: 'cats' }, skill: 'story' }))),
    );
    expect(events[0]?.payload?.$case).toBe('task');
    expect(updateTexts(events).some((t) => t.includes('node "Titler" done'))).toBe(true);
    expect(states(events).at(-1)).toBe('COMPLETED');
    const taskId = events[0]?.payload?.$case === 'task' ? events[0].payload.value.id : '';
    const task = await legacy.getTask({ tenant: '', id: taskId } as never);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toBe('TITLE for old client story');
    openai.enqueue({ text: 'blocking old' });
    const blocking = await legacy.sendMessage(
      send(userMessage({ text: 'y', data: { topic: 'dogs' }, skill: 'story' })),
    );
    expect(artifactText(blocking as never)).toBe('TITLE for blocking old');
  });
});
