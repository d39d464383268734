import type { RunStore } from '../runtime/journal/store.js';
import type { RuntimeOptions } from '../runtime/runtime.js';
import type { McpServerDef } from '../schema/hatchery.js';
import { checkAllowHosts } from '../tools/builtin/net-guard.js';
import { intOption, type ParsedValues } from './args.js';

/** The options `run` and `serve` share: what runs may read, write, run and reach, and their step budget. */
export const RUNTIME_FLAGS = {
  'max-steps': { type: 'string' },
  'allow-root': { type: 'string', multiple: true },
  'allow-write': { type: 'string', multiple: true },
  'allow-shell': { type: 'boolean' },
  'allow-host': { type: 'string', multiple: true },
  'allow-private-network': { type: 'boolean' },
  'mcp-config': { type: 'string' },
} as const;

/** The Runtime options the shared flags stand for; bad values are USAGE errors naming the flag. */
export function runtimeOptions(
  values: ParsedValues<typeof RUNTIME_FLAGS>,
  mcpServers: Readonly<Record<string, McpServerDef>> | undefined,
): RuntimeOptions {
  return {
    allowRoots: values['allow-root'],
    allowWrite: values['allow-write'],
    maxSteps: intOption(values['max-steps'], 'max-steps'),
    tools: {
      allowShell: values['allow-shell'] === true,
      allowHosts: checkAllowHosts(values['allow-host']),
      allowPrivateNetwork: values['allow-private-network'] === true,
      mcpServers,
    },
  };
}

/** The run store of the state folder (--state DIR, else $HATCHERY_STATE, else .hatchery/runs here). */
export function openRunStore(state: string | undefined): RunStore {
  void state;
  throw new Error('openRunStore: waits for the journal branch');
}
