import { pathToFileURL } from 'node:url';
import { requestKey } from '../journal/canonical.js';
import { VENDORS } from '../providers/vendors.js';
import { CASSETTE_VERSION, type CassetteEntry } from '../runtime/cassette/format.js';
import { SCHEMA_FILE } from './client-config.js';

/** The question the first test asks, and the input shown in the next steps. */
export const HELLO_QUESTION = 'What is a hatchery?';

const SYSTEM = 'You are a concise, friendly assistant. Answer in two or three sentences.';

/**
 * The answer of the cassette. It was recorded once, through the real providers of every vendor
 * against the fake vendor servers of test/fakes with this reply queued (test/cli/init.test.ts records
 * it again and checks the request is the same); only the model names are filled in at init time.
 */
const ANSWER = {
  text: 'A hatchery is a JSON file that describes an LLM workflow. hatchery-mcp runs it from the shell, or serves it to your AI client as an MCP tool.',
  usage: { inputTokens: 31, outputTokens: 34 },
};

/** The first hatchery: one drone, no model named so the default of the key that is set applies. */
export function helloJson(): string {
  const def = {
    // An absolute URL: the folder lives outside the package, where a relative path would not resolve.
    $schema: pathToFileURL(SCHEMA_FILE).href,
    name: 'hello',
    desc: 'Answers a question in two or three friendly sentences. Input: the question.',
    nodes: [
      {
        name: 'Answer',
        sys_prompt: SYSTEM,
        usr_prompt: "{{ ctx.input | default('Say hello and explain what a hatchery is.', true) }}",
      },
    ],
  };
  return `${JSON.stringify(def, null, 2)}\n`;
}

/** The test file of hello.json, in tests/ next to its cassette. */
export function helloTestYaml(): string {
  return `# Tests of hello.json, answered from the recorded cassette: no network and no API key needed.
# Run them with: hatchery-mcp test <this folder>
# A drone that names no model replays the model the cassette recorded, whatever HATCHERY_MODEL or
# keys your shell holds; to record answers for another model, name it in the hatchery and run:
# hatchery-mcp test <this folder> --record-missing
hatchery: ../hello.json
cassette: cassettes/hello.jsonl
cases:
  - name: answers the question it is asked
    input: ${HELLO_QUESTION}
    expect:
      nodes: [Answer]
      contains: MCP tool
      max_tokens: 100
`;
}

/**
 * The cassette of the test: one entry per vendor's default model, so a replay matches whichever
 * key is set (a replay with a key resolves the default model of that key) and, with none, the first.
 */
export function helloCassette(now = new Date()): string {
  const lines = [
    JSON.stringify({ format: 'hatchery-cassette', version: CASSETTE_VERSION, created: now.toISOString() }),
  ];
  for (const vendor of VENDORS) {
    const request = {
      vendor: vendor.id,
      model: vendor.defaultModel,
      system: SYSTEM,
      messages: [{ role: 'user', content: HELLO_QUESTION }],
    };
    const entry: CassetteEntry = {
      type: 'model',
      key: requestKey(request),
      node: 'Answer',
      request,
      response: { ...ANSWER, toolCalls: [], stopReason: vendor.textStop },
    };
    lines.push(JSON.stringify(entry));
  }
  return `${lines.join('\n')}\n`;
}

/** Keeps the tests (and their cassettes) out of the served folder: they are no tools. */
export const HATCHERYIGNORE = `# Paths hatchery-mcp does not serve or validate (gitignore syntax).
tests/
`;
