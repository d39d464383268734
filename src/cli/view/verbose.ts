/**
 * --verbose: what a run said and heard, as text blocks between the progress lines: the prompt of
 * each model call (the system prompt and the messages not shown before in that conversation), the
 * reply, the arguments and result of each tool call. Every text is redacted of the run's secrets,
 * stripped of terminal control codes and cut to a length a person reads.
 */

import type { RunEvent } from '../../engine/contracts.js';
import { ConversationCursor } from '../../journal/conversations.js';
import type { ChatMessage } from '../../providers/types.js';
import { printable } from '../print.js';
import { label } from './format.js';
import type { Paint } from './style.js';

/** Characters of one text shown before it is cut. */
export const VERBOSE_MAX_CHARS = 2000;

/** Turns events into verbose blocks; remembers how much of each conversation it showed already. */
export class VerboseText {
  /** Messages already shown, per conversation (node execution, or spawned agent). */
  private readonly seen = new ConversationCursor();

  constructor(
    private readonly secrets: readonly string[],
    private readonly p: Paint,
  ) {}

  /** The block of event `e` indented by `depth` levels, or undefined for events without content. */
  block(e: RunEvent, depth: number): string | undefined {
    const at = '  '.repeat(Math.max(0, depth));
    switch (e.type) {
      case 'model_call': {
        // The reply is shown below, so the assistant message that repeats it next turn is not shown again.
        const from = this.seen.next(e, 1);
        const msgs = e.request.messages;
        const parts: [string, string][] = [];
        if (from === 0 && e.request.system) parts.push(['system', e.request.system]);
        if (from > 0) parts.push(['...', `${from} earlier message${from === 1 ? '' : 's'}`]);
        for (let i = from; i < msgs.length; i++) parts.push(this.message(msgs[i]!));
        const reply: [string, string][] = [];
        if (e.text) reply.push(['text', e.text]);
        for (const c of e.toolCalls ?? []) reply.push([`call ${c.name}`, JSON.stringify(c.args)]);
        if (e.error !== undefined) reply.push(['error', e.error]);
        return [
          this.section(at, `prompt of ${label(e.node)} to ${label(e.model)}`, parts),
          this.section(at, `reply of ${label(e.model)}`, reply),
        ].join('\n');
      }
      case 'tool_start':
        return this.section(at, `arguments of tool ${label(e.tool)}`, [
          ['args', JSON.stringify(e.args ?? {})],
        ]);
      case 'tool_call':
        if (e.result === undefined) return undefined;
        return this.section(at, `${e.isError ? 'error' : 'result'} of tool ${label(e.tool)}`, [
          ['', e.result],
        ]);
      default:
        return undefined;
    }
  }

  private message(m: ChatMessage): [string, string] {
    if (m.role === 'tool') return [`tool ${m.name}`, m.content];
    if (m.role === 'assistant' && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ');
      return ['assistant', `${m.content ? `${m.content}\n` : ''}calls ${calls}`];
    }
    return [m.role, m.content];
  }

  /** A titled block: each part's lines behind a bar, its role first. */
  private section(at: string, heading: string, parts: [string, string][]): string {
    const lines = [this.p.dim(`${at}┌ ${heading}`)];
    for (const [role, text] of parts) {
      const body = this.clean(text).split('\n');
      const lead = role ? `${this.p.cyan(role)}: ` : '';
      lines.push(`${at}${this.p.dim('│')} ${lead}${body[0] ?? ''}`);
      for (let i = 1; i < body.length; i++) lines.push(`${at}${this.p.dim('│')}   ${body[i]}`);
    }
    return lines.join('\n');
  }

  /** Redacted, safe for a terminal, cut to the maximum length. */
  private clean(text: string): string {
    const safe = printable(text, this.secrets, { authHeaders: true });
    const max = VERBOSE_MAX_CHARS;
    return safe.length <= max ? safe : `${safe.slice(0, max)}… (${safe.length - max} more characters)`;
  }
}
