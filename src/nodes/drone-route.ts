import type { CompileContext } from '../engine/contracts.js';
import type { ChatMessage, ChatRequest, Provider, Usage } from '../providers/types.js';
import { addUsage } from '../providers/types.js';
import { END } from '../schema/names.js';

/** The successors a supervisor drone chooses among, with what each does. */
export interface ChoiceSpec {
  targets: string[];
  descriptions: string[];
  fallback: string;
}

/** Name of the tool a supervisor answers through. */
const CHOOSE_TOOL = 'choose_next';

/** Builds the choice of a `route: "choose"` drone; it needs a `next` list of at least two names. */
export function compileChoice(
  next: string | string[] | undefined,
  route: string | undefined,
  cc: CompileContext,
): ChoiceSpec | undefined {
  if (route !== 'choose') return undefined;
  if (!Array.isArray(next) || next.length < 2) {
    cc.problem('route', 'route "choose" needs a next list of at least two nodes to choose among');
    return undefined;
  }
  return {
    targets: next,
    descriptions: next.map((t) =>
      t === END ? 'End the workflow here with the current answer.' : cc.graph.node(t)?.def.desc || '',
    ),
    fallback: next[next.length - 1]!,
  };
}

/**
 * Asks the model which node runs next, as a forced tool call with an enum of the targets.
 * An invalid choice is retried once; then the default (last entry) is taken. Returns null for END.
 */
export async function chooseNext(opts: {
  provider: Provider;
  request: ChatRequest;
  messages: ChatMessage[];
  spec: ChoiceSpec;
  usage: Usage;
}): Promise<string | null> {
  const { spec } = opts;
  const options = spec.targets
    .map((t, i) => `- ${t}${spec.descriptions[i] ? `: ${spec.descriptions[i]}` : ''}`)
    .join('\n');
  const tool = {
    name: CHOOSE_TOOL,
    description: `Choose the step that runs next.\n${options}`,
    inputSchema: {
      type: 'object',
      properties: {
        next: { type: 'string', enum: spec.targets, description: 'The step to run next' },
        reason: { type: 'string', description: 'One sentence: why this step' },
      },
      required: ['next'],
    },
  };
  let messages: ChatMessage[] = [
    ...opts.messages,
    { role: 'user', content: `Now choose the next step by calling ${CHOOSE_TOOL}. The options:\n${options}` },
  ];
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await opts.provider.chat({
      ...opts.request,
      messages,
      tools: [tool],
      toolChoice: { name: CHOOSE_TOOL },
      responseSchema: undefined,
    });
    addUsage(opts.usage, res.usage);
    const call = res.toolCalls.find((c) => c.name === CHOOSE_TOOL);
    const choice = call?.args.next;
    if (typeof choice === 'string' && spec.targets.includes(choice)) return choice === END ? null : choice;
    const why = call
      ? `"${String(choice)}" is not one of ${spec.targets.join(', ')}`
      : `no ${CHOOSE_TOOL} call`;
    messages = [
      ...messages,
      res.toolCalls.length > 0
        ? { role: 'assistant', content: res.text, toolCalls: res.toolCalls }
        : { role: 'assistant', content: res.text || '(no choice)' },
      ...res.toolCalls.map(
        (c): ChatMessage => ({
          role: 'tool',
          toolCallId: c.id,
          name: c.name,
          content: `invalid: ${why}`,
          isError: true,
        }),
      ),
      {
        role: 'user',
        content: `Invalid choice (${why}). Call ${CHOOSE_TOOL} with one of: ${spec.targets.join(', ')}.`,
      },
    ];
  }
  return spec.fallback === END ? null : spec.fallback;
}
