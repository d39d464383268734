/**
 * The places of spans a CLI run does not show: a spawned agent's model calls hang under its
 * spawn_agent tool call, the items of a map node under the map node, and a listener of the run's own
 * (onEvent) still gets every event beside the tracer, even when it throws.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../src/providers/scripted.js';
import type { ChatRequest } from '../../src/providers/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { echo, hatch, load } from '../helpers.js';
import { OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver;
afterEach(() => receiver?.close());

describe('span places in the run tree', () => {
  it('spawned agents under spawn_agent, map items under their map node', async () => {
    receiver = await new OtlpReceiver().start();
    const model = new ScriptedProvider((req: ChatRequest) => {
      if (req.system.startsWith('Research:')) return 'a fact';
      if (req.messages.at(-1)?.role === 'tool') return 'summary';
      return {
        text: '',
        toolCalls: [{ id: 'c1', name: 'spawn_agent', args: { template: 'researcher', task: 'tides' } }],
      };
    });
    const runtime = new Runtime({
      providers: { openai: model },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const h = load(
      hatch([
        {
          name: 'Coordinator',
          usr_prompt: '{{ ctx.input }}',
          spawn: {
            templates: [{ name: 'researcher', desc: 'Finds facts', sys_prompt: 'Research: {{ task }}' }],
          },
          next: 'Each',
        },
        { name: 'Each', type: 'map', items: '["a","b","c"]', node: 'Item' },
        echo('Item', 'item {{ ctx.item }}'),
      ]),
    );
    const seen: string[] = [];
    const res = await runtime.run(h, {
      input: 'go',
      onEvent: (e) => {
        seen.push(e.type);
        throw new Error('a broken progress consumer');
      },
    });
    expect(res.output).toBe('["item a","item b","item c"]');
    await runtime.close();
    expect(seen).toContain('tool_start');
    expect(seen.at(-1)).toBe('run_end');

    const spawn = receiver.one('execute_tool spawn_agent');
    expect(receiver.byId(spawn.parentSpanId)?.name).toBe('invoke_agent Coordinator');
    const chats = receiver.spans.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(3);
    // Two turns of the coordinator, one of the spawned researcher under its spawn_agent call.
    expect(chats.filter((c) => c.parentSpanId === spawn.spanId)).toHaveLength(1);
    const map = receiver.one('map Each');
    const items = receiver.spans.filter((s) => s.name === 'baneling Item');
    expect(items).toHaveLength(3);
    for (const item of items) expect(item.parentSpanId).toBe(map.spanId);
  });
});
