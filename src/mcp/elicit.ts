import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { HatcheryError } from '../core/errors.js';
import type { Hatchery } from '../engine/contracts.js';

/** Asks the user of the MCP client for values (an `elicitation/create` form request). */
export type ElicitFn = (params: ElicitRequestFormParams, signal: AbortSignal) => Promise<ElicitResult>;

/** True when the client's declared capabilities allow form elicitation. */
export function canElicitForm(caps: { elicitation?: { form?: object; url?: object } } | undefined): boolean {
  const e = caps?.elicitation;
  // An empty `elicitation: {}` predates the form/url split and means forms.
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}

/**
 * Completes the declared inputs of a call: those the arguments lack are asked of the user when the
 * client supports elicitation; otherwise (or when the user declines) the call fails naming them.
 */
export async function completeInputs(
  h: Hatchery,
  vars: Record<string, string>,
  elicit: ElicitFn | undefined,
  signal: AbortSignal,
): Promise<Record<string, string>> {
  const missing = Object.keys(h.inputs).filter((k) => vars[k] === undefined);
  if (missing.length === 0) return vars;
  const names = missing.map((k) => `${k} (${h.inputs[k]})`).join(', ');
  const plural = missing.length > 1 ? 's' : '';
  if (!elicit) {
    throw new HatcheryError(
      'MISSING_INPUT',
      `missing input${plural}: ${names}; pass ${missing.map((k) => `"${k}"`).join(', ')} as tool argument${plural} (this client cannot be asked for ${missing.length > 1 ? 'them' : 'it'}: it does not support elicitation)`,
      { file: h.file, field: 'inputs', inputs: missing },
    );
  }
  const properties: ElicitRequestFormParams['requestedSchema']['properties'] = {};
  for (const k of missing) properties[k] = { type: 'string', title: k, description: h.inputs[k] || k };
  let result: ElicitResult;
  try {
    result = await elicit(
      {
        mode: 'form',
        message: `${h.name} needs ${missing.length > 1 ? 'these inputs' : 'this input'}: ${missing.map((k) => h.inputs[k] || k).join(' / ')}`,
        requestedSchema: { type: 'object', properties, required: missing },
      },
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw err;
    throw new HatcheryError(
      'MISSING_INPUT',
      `missing input${plural}: ${names}; asking the user failed: ${(err as Error).message}`,
      { file: h.file, field: 'inputs', inputs: missing },
      { cause: err },
    );
  }
  if (result.action !== 'accept') {
    throw new HatcheryError(
      'MISSING_INPUT',
      `missing input${plural}: ${names}; the user ${result.action === 'decline' ? 'declined to give' : 'cancelled the request for'} ${missing.length > 1 ? 'them' : 'it'}`,
      { file: h.file, field: 'inputs', inputs: missing },
    );
  }
  const out = { ...vars };
  const still: string[] = [];
  for (const k of missing) {
    const v = result.content?.[k];
    if (v === undefined || v === null) still.push(k);
    else out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  if (still.length > 0) {
    throw new HatcheryError(
      'MISSING_INPUT',
      `missing input${still.length > 1 ? 's' : ''}: ${still.map((k) => `${k} (${h.inputs[k]})`).join(', ')}; the user's answer did not include ${still.length > 1 ? 'them' : 'it'}`,
      { file: h.file, field: 'inputs', inputs: still },
    );
  }
  return out;
}
