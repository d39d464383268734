/** Issue 10: an unknown provider prefix in a `model` is a load error, no longer a silent OpenAI call. */
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { problemsIn } from '../tools/helpers.js';

const VALID =
  "valid prefixes: openai:, anthropic:, sampling or client (or a bare model name without a colon); a model id that itself contains a colon (Ollama's llama3:8b) is written openai:llama3:8b";

describe('model provider prefixes', () => {
  it('reports the top-level model, a drone model and a spawn template model, with did-you-mean', () => {
    const def = {
      name: 'm',
      desc: 'd',
      model: 'opnai:gpt-4o',
      nodes: [
        {
          name: 'A',
          usr_prompt: 'u',
          model: 'antropic:claude-sonnet-4-5',
          spawn: { templates: [{ name: 't', desc: 'd', model: 'sampeling:x' }] },
        },
      ],
    };
    expect(problemsIn(tempDir(), def)).toEqual([
      `model: unknown provider prefix "opnai:" in model "opnai:gpt-4o" (did you mean "openai:"?); ${VALID}`,
      `nodes/0/model: unknown provider prefix "antropic:" in model "antropic:claude-sonnet-4-5" (did you mean "anthropic:"?); ${VALID}`,
      `nodes/0/spawn/templates/0/model: unknown provider prefix "sampeling:" in model "sampeling:x" (did you mean "sampling:"?); ${VALID}`,
    ]);
  });

  it('lists the valid prefixes for a prefix that resembles none', () => {
    expect(
      problemsIn(tempDir(), {
        name: 'm',
        desc: 'd',
        nodes: [{ name: 'A', usr_prompt: 'u', model: 'mistral:large' }],
      }),
    ).toEqual([`nodes/0/model: unknown provider prefix "mistral:" in model "mistral:large"; ${VALID}`]);
  });

  it('allows bare names, known prefixes, and colon ids on a node with its own base_url', () => {
    const def = {
      name: 'm',
      desc: 'd',
      model: 'gpt-4o',
      nodes: [
        { name: 'A', usr_prompt: 'u', model: 'claude-sonnet-4-5', next: 'B' },
        { name: 'B', usr_prompt: 'u', model: 'sampling', next: 'C' },
        { name: 'C', usr_prompt: 'u', model: 'OpenAI:gpt-4o', next: 'D' },
        { name: 'D', usr_prompt: 'u', model: 'llama3:8b', base_url: 'http://127.0.0.1:11434/v1' },
      ],
    };
    expect(problemsIn(tempDir(), def)).toEqual([]);
  });
});
