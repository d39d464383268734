/**
 * A2A tasks are runs of the journal and the cards follow the folder: after a restart on the same
 * state folder GetTask still answers a completed task with its artifact, a failed one with its
 * reason, and a task waiting for an answer can be answered; adding, renaming and removing files
 * changes the agent cards' skills.
 */
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { echo, tempDir } from '../helpers.js';
import { echoDef, fakeEnv, hatcheryDir, waitFor, writeHatchery } from '../mcp/helpers.js';
import {
  artifactText,
  send,
  serveA2a,
  statusText,
  TOKEN,
  updateTexts,
  userMessage,
  v1Client,
} from './helpers.js';

const { openai, anthropic } = fakeVendors();

describe('A2A tasks across a restart', () => {
  it('keeps GetTask answers (completed with its artifact, failed with its reason, each its context id) and answers a waiting task', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'echo.json', echoDef('shout', '!'));
    writeHatchery(dir, 'broken.json', {
      name: 'broken',
      desc: 'reads a file that is not there',
      nodes: [{ name: 'Read', type: 'tool', tool_name: 'read_file', tool_args: { path: 'missing.txt' } }],
    });
    writeHatchery(dir, 'ask.json', {
      name: 'ask',
      desc: 'asks a colour',
      nodes: [
        { name: 'Pick', type: 'ask', question: 'Which colour?', save_output: 'c', next: 'Say' },
        { name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: 'colour {{ ctx.c }}' } },
      ],
    });
    const args = ['--a2a', '--state', path.join(tempDir('hatchery-a2a-state-'), 'runs')];
    let served = await serveA2a(dir, { args });
    let client = await v1Client(`${served.origin}/a2a/`);
    // The client's own context id on one task, the server's on the others.
    const conversation = `my-conversation-${crypto.randomUUID()}`;
    const ok = (await client.sendMessage(
      send(userMessage({ text: 'a', skill: 'shout', contextId: conversation })),
    )) as { id: string; contextId: string };
    expect(ok.contextId).toBe(conversation);
    const bad = (await client.sendMessage(send(userMessage({ text: 'b', skill: 'broken' })))) as {
      id: string;
    };
    const waiting = (await client.sendMessage(send(userMessage({ text: 'c', skill: 'ask' })))) as {
      id: string;
      contextId: string;
      status: { state: TaskState };
    };
    expect(waiting.contextId).not.toBe(waiting.id);
    expect(waiting.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(await served.stop()).toBe(0);

    served = await serveA2a(dir, { args });
    try {
      client = await v1Client(`${served.origin}/a2a/`);
      const done = await client.getTask({ tenant: '', id: ok.id, historyLength: undefined });
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(artifactText(done)).toBe('!a');
      expect(done.contextId).toBe(conversation);
      const failed = await client.getTask({ tenant: '', id: bad.id, historyLength: undefined });
      expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(statusText(failed.status)).toContain('missing.txt');
      const asked = await client.getTask({ tenant: '', id: waiting.id, historyLength: undefined });
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(statusText(asked.status)).toContain('Which colour?');
      expect(asked.contextId).toBe(waiting.contextId);
      expect(asked.status?.message?.contextId).toBe(waiting.contextId);
      const answered = await client.sendMessage(
        send(userMessage({ text: 'blue', taskId: waiting.id, contextId: asked.contextId })),
      );
      expect(artifactText(answered as never)).toBe('colour blue');
      expect((answered as { contextId: string }).contextId).toBe(waiting.contextId);
    } finally {
      await served.stop();
    }
  });
});

describe('an A2A task whose server was killed', () => {
  it('reads failed (interrupted, saying how to resume), then completes once a server resumes it', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'two.json', {
      name: 'two',
      desc: 'a step, then a slow model call',
      nodes: [
        echo('First', 'first {{ ctx.input }}', { next: 'Slow' }),
        { name: 'Slow', usr_prompt: 'go on' },
      ],
    });
    const env = fakeEnv(`${openai.url}/v1`, anthropic.url);
    const args = ['--a2a', '--state', path.join(tempDir('hatchery-a2a-state-'), 'runs')];
    let served = await serveA2a(dir, { args, env });
    openai.enqueue({ text: 'never', delayMs: 60_000 });
    let client = await v1Client(`${served.origin}/a2a/`);
    const texts: string[] = [];
    let id = '';
    const streaming = (async () => {
      for await (const e of client.sendMessageStream(send(userMessage({ text: 'x' })))) {
        if (e.payload?.$case === 'task') id = e.payload.value.id;
        texts.push(...updateTexts([e]));
      }
    })().catch(() => undefined);
    await waitFor(() => texts.some((t) => t.includes('node "Slow" started')), 15_000, 'the slow node');
    await waitFor(() => openai.pending === 0, 15_000, 'the slow model call');
    served.cli.child.kill('SIGKILL');
    await served.cli.exit;
    await streaming;

    served = await serveA2a(dir, { args, env });
    try {
      client = await v1Client(`${served.origin}/a2a/`);
      const interrupted = await client.getTask({ tenant: '', id, historyLength: undefined });
      expect(interrupted.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(statusText(interrupted.status)).toContain('interrupted');
      expect(statusText(interrupted.status)).toContain('--resume-interrupted');
    } finally {
      await served.stop();
    }

    openai.enqueue({ text: 'resumed' });
    served = await serveA2a(dir, { args: [...args, '--resume-interrupted'], env });
    try {
      client = await v1Client(`${served.origin}/a2a/`);
      let last = '';
      const done = await waitFor(
        async () => {
          const t = await client.getTask({ tenant: '', id, historyLength: undefined });
          last = `${TaskState[t.status?.state ?? 0]}: ${statusText(t.status)}`;
          return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
        },
        15_000,
        'the resumed task to complete',
      ).catch((err: Error) => {
        throw new Error(`${err.message}; last: ${last}; server: ${served.cli.err()}`);
      });
      expect(artifactText(done)).toBe('resumed');
    } finally {
      await served.stop();
    }
  });
});

describe('A2A agent cards and hot reload', () => {
  it('adds, renames and removes skills as files come, change and go', async () => {
    const dir = hatcheryDir();
    writeHatchery(dir, 'a.json', echoDef('alpha'));
    const served = await serveA2a(dir, { args: ['--a2a', '--no-journal'] });
    const skills = async (card = '/.well-known/agent-card.json') => {
      const r = await fetch(`${served.origin}${card}`, {
        headers: { authorization: `Bearer ${TOKEN}`, 'a2a-version': '1.0' },
      });
      if (r.status !== 200) return `HTTP ${r.status}`;
      return ((await r.json()) as { skills: { id: string }[] }).skills.map((s) => s.id).join(',');
    };
    try {
      expect(await skills()).toBe('alpha');
      writeHatchery(dir, 'b.json', echoDef('beta'));
      await waitFor(async () => (await skills()) === 'alpha,beta', 10_000, 'beta on the card');
      expect(await skills('/a2a/beta/.well-known/agent-card.json')).toBe('beta');
      writeHatchery(dir, 'b.json', echoDef('gamma'));
      await waitFor(async () => (await skills()) === 'alpha,gamma', 10_000, 'beta renamed gamma');
      expect(await skills('/a2a/beta/.well-known/agent-card.json')).toBe('HTTP 404');
      renameSync(path.join(dir, 'a.json'), path.join(dir, 'a.txt'));
      rmSync(path.join(dir, 'b.json'));
      await waitFor(async () => (await skills()) === '', 10_000, 'no skills left');
    } finally {
      await served.stop();
    }
  });
});
