/**
 * `hatchery-mcp run` with OTEL_EXPORTER_OTLP_ENDPOINT exports its run as GenAI spans to a loopback
 * OTLP/HTTP receiver: the span tree of a drone's tool loop, a parallel node and a hatch: tool (names,
 * kinds, attributes, parent links), the error status of a failing node, and prompts that reach the
 * export only when content capture is on, and then without the run's secrets.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeVendors } from '../fakes/vendors.js';
import { echo, runCli, tempDir } from '../helpers.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const { openai } = fakeVendors();
const KEY = 'sk-test-otel-planted-key-0001';
const TOKEN = 'planted-service-token-77';

let receiver: OtlpReceiver;
beforeEach(async () => {
  openai.reset();
  receiver = await new OtlpReceiver().start();
});
afterEach(() => receiver.close());

function files(): string {
  const dir = tempDir('otel-cli-');
  writeFileSync(
    path.join(dir, 'main.json'),
    JSON.stringify({
      name: 'traced',
      desc: 'a drone with tools, then two branches',
      model: 'openai:gpt-test',
      nodes: [
        {
          name: 'Agent',
          sys_prompt: 'You are careful.',
          usr_prompt: '{{ ctx.input }}',
          tools: ['echo', 'hatch:sub.json'],
          next: 'Fan',
        },
        { name: 'Fan', type: 'parallel', branches: ['Left', 'Right'] },
        echo('Left', 'left'),
        echo('Right', 'right'),
      ],
    }),
  );
  writeFileSync(
    path.join(dir, 'sub.json'),
    JSON.stringify({ name: 'sub', desc: 'a nested run', nodes: [echo('Inner', 'inner {{ ctx.input }}')] }),
  );
  writeFileSync(
    path.join(dir, 'fail.json'),
    JSON.stringify({
      name: 'failing',
      desc: 'a drone whose model call fails',
      model: 'openai:gpt-test',
      nodes: [{ name: 'Broken', usr_prompt: '{{ ctx.input }}' }],
    }),
  );
  return dir;
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENAI_API_KEY: KEY,
    OPENAI_BASE_URL: openai.baseURL,
    MY_SERVICE_TOKEN: TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    ...extra,
  };
}

/** The tool loop: echo, then the hatch: tool, then the answer. */
function scriptAgent(): void {
  openai.enqueue(
    { toolCalls: [{ id: 'call_echo_1', name: 'echo', args: { text: 'ping' } }] },
    { toolCalls: [{ name: 'sub', args: { input: 'deep' } }] },
    { text: 'all done' },
  );
}

const childrenOf = (s: ReceivedSpan) => receiver.spans.filter((c) => c.parentSpanId === s.spanId);
const names = (spans: ReceivedSpan[]) => spans.map((s) => s.name).sort();

describe('run exports GenAI spans over OTLP/HTTP', () => {
  it('draws the run tree: tool loop, parallel branches, nested hatch: run', async () => {
    const dir = files();
    scriptAgent();
    const r = await runCli(['run', path.join(dir, 'main.json'), '--input', 'hello'], { env: env() });
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    expect(receiver.requests[0]!.path).toBe('/v1/traces');

    const run = receiver.one('invoke_workflow traced');
    expect(run.parentSpanId).toBeUndefined();
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': 'traced',
      'hatchery.depth': 0,
    });
    expect(run.resource['service.name']).toBe('hatchery-mcp');
    expect(run.status.code).not.toBe(2);
    expect(new Set(receiver.spans.map((s) => s.traceId))).toEqual(new Set([run.traceId]));
    expect(names(childrenOf(run))).toEqual(['invoke_agent Agent', 'parallel Fan']);

    const agent = receiver.one('invoke_agent Agent');
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'hatchery.node.kind': 'drone',
    });
    expect(names(childrenOf(agent))).toEqual([
      'chat gpt-test',
      'chat gpt-test',
      'chat gpt-test',
      'execute_tool echo',
      'execute_tool sub',
    ]);
    const chats = childrenOf(agent).filter((s) => s.name.startsWith('chat'));
    for (const c of chats) {
      expect(c.kind).toBe(3); // CLIENT
      expect(c.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.response.model': 'gpt-test',
      });
      expect(c.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(c.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(c.endNs).toBeGreaterThanOrEqual(c.startNs);
      // No content unless asked for.
      expect(c.attributes['gen_ai.input.messages']).toBeUndefined();
    }
    const reasons = chats
      .sort((a, b) => Number(a.startNs - b.startNs))
      .map((c) => c.attributes['gen_ai.response.finish_reasons']);
    expect(reasons).toEqual([['tool_calls'], ['tool_calls'], ['stop']]);

    const tool = childrenOf(agent).find((s) => s.name === 'execute_tool echo')!;
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.type': 'function',
    });
    // The id the model gave the call, as the conventions ask.
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('call_echo_1');
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBeUndefined();

    // The nested run hangs under the hatch: tool call that started it.
    const hatchCall = childrenOf(agent).find((s) => s.name === 'execute_tool sub')!;
    expect(names(childrenOf(hatchCall))).toEqual(['invoke_workflow sub']);
    const nested = receiver.one('invoke_workflow sub');
    expect(nested.attributes['hatchery.depth']).toBe(1);
    const inner = childrenOf(nested);
    expect(inner).toHaveLength(1);
    expect(inner[0]!.name).toMatch(/ Inner$/);
    expect(names(childrenOf(inner[0]!))).toEqual(['execute_tool echo']);

    // The branches hang under their parallel node, each with its tool call.
    const fan = receiver.one('parallel Fan');
    expect(fan.attributes['hatchery.node.kind']).toBe('parallel');
    const branches = childrenOf(fan);
    expect(branches.map((b) => b.name.split(' ').at(-1)).sort()).toEqual(['Left', 'Right']);
    for (const b of branches) expect(names(childrenOf(b))).toEqual(['execute_tool echo']);
  });

  it('a failing node, its model call and the run carry status ERROR and error.type', async () => {
    const dir = files();
    openai.enqueue({ status: 400, message: `the request is malformed (${TOKEN})` });
    const r = await runCli(['run', path.join(dir, 'fail.json'), '--input', 'x'], { env: env() });
    expect(r.code).toBe(1);
    const run = receiver.one('invoke_workflow failing');
    const node = receiver.one('invoke_agent Broken');
    const chat = receiver.one('chat gpt-test');
    expect(chat.parentSpanId).toBe(node.spanId);
    expect(node.parentSpanId).toBe(run.spanId);
    for (const s of [run, node, chat]) {
      expect(s.status.code).toBe(2);
      expect(typeof s.attributes['error.type']).toBe('string');
    }
    expect(node.attributes['error.type']).toBe('PROVIDER');
    expect(chat.attributes['error.type']).toBe('PROVIDER');
    expect(run.attributes['error.type']).toBe('PROVIDER');
    expect(node.status.message).toContain('malformed');
    // Error messages are redacted of the run's secrets too.
    for (const body of receiver.bodies) expect(body).not.toContain(TOKEN);
  });

  it('a retried model call: a model_retry event on the node span, retries on the chat span', async () => {
    const dir = files();
    openai.enqueue({ status: 429, message: 'slow down' }, { text: 'fine' });
    const r = await runCli(['run', path.join(dir, 'fail.json'), '--input', 'x'], { env: env() });
    expect(r.code).toBe(0);
    const node = receiver.one('invoke_agent Broken');
    expect(node.status.code).not.toBe(2);
    expect(node.events).toEqual([
      {
        name: 'hatchery.model_retry',
        attributes: expect.objectContaining({
          'hatchery.retry.attempt': 1,
          'hatchery.retry.rate_limited': true,
        }),
      },
    ]);
    expect(receiver.one('chat gpt-test').attributes['hatchery.retries']).toBe(1);
  });

  it('captures content only when asked, and never the run secrets', async () => {
    const dir = files();
    const input = `my key is ${KEY} and my token is ${TOKEN}`;
    scriptAgent();
    const off = await runCli(['run', path.join(dir, 'main.json'), '--input', input], { env: env() });
    expect(off.code).toBe(0);
    expect(receiver.spans.length).toBeGreaterThan(5);
    expect(receiver.spans.some((s) => 'gen_ai.input.messages' in s.attributes)).toBe(false);
    const before = receiver.bodies.length;

    scriptAgent();
    const on = await runCli(['run', path.join(dir, 'main.json'), '--input', input], {
      env: env({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }),
    });
    expect(on.code).toBe(0);
    expect(receiver.bodies.length).toBeGreaterThan(before);
    for (const body of receiver.bodies) {
      expect(body).not.toContain(KEY);
      expect(body).not.toContain(TOKEN);
      expect(body).not.toContain('planted');
    }
    const chats = receiver.spans.filter(
      (s) => s.name === 'chat gpt-test' && 'gen_ai.input.messages' in s.attributes,
    );
    expect(chats).toHaveLength(3);
    const first = JSON.parse(
      chats.sort((a, b) => Number(a.startNs - b.startNs))[0]!.attributes['gen_ai.input.messages'] as string,
    );
    expect(first).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'my key is [redacted] and my token is [redacted]' }] },
    ]);
    const system = JSON.parse(chats[0]!.attributes['gen_ai.system_instructions'] as string);
    expect(system).toEqual([{ type: 'text', content: 'You are careful.' }]);
    const out = chats.map((c) => JSON.parse(c.attributes['gen_ai.output.messages'] as string));
    expect(out).toContainEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'all done' }], finish_reason: 'stop' },
    ]);
    const calls = receiver.spans.filter(
      (s) => s.name === 'execute_tool echo' && 'gen_ai.tool.call.arguments' in s.attributes,
    );
    expect(calls.map((c) => JSON.parse(c.attributes['gen_ai.tool.call.arguments'] as string))).toContainEqual(
      { text: 'ping' },
    );
    expect(calls.map((c) => c.attributes['gen_ai.tool.call.result'])).toContainEqual(JSON.stringify('ping'));
  });
});
