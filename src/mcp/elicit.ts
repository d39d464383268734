import {
  type ElicitRequestFormParams,
  type ElicitResult,
  specTypeSchemas,
} from '@modelcontextprotocol/server';
import { HatcheryError } from '../core/errors.js';
import type { AskFn, AskRequest, Hatchery } from '../engine/contracts.js';
import type { OutboundGuard } from './outbound.js';

/** Asks the user of the MCP client for values (an `elicitation/create` form request). */
export type ElicitFn = (params: ElicitRequestFormParams, signal: AbortSignal) => Promise<ElicitResult>;

/**
 * A form as sent to a client: its message and field descriptions (the file's input prompts and
 * questions, rendered with run data) redacted and capped like any description.
 */
export function guardForm(
  out: Pick<OutboundGuard, 'desc'>,
  params: ElicitRequestFormParams,
): ElicitRequestFormParams {
  const props: ElicitRequestFormParams['requestedSchema']['properties'] = {};
  for (const [k, p] of Object.entries(params.requestedSchema.properties)) {
    props[k] = 'description' in p && p.description ? { ...p, description: out.desc(p.description) } : p;
  }
  return {
    ...params,
    message: out.desc(params.message),
    requestedSchema: { ...params.requestedSchema, properties: props },
  };
}

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
  /** The error naming the inputs still missing, and why. */
  const lacking = (keys: string[], why: (them: string) => string, cause?: unknown) =>
    new HatcheryError(
      'MISSING_INPUT',
      `missing input${keys.length > 1 ? 's' : ''}: ${keys.map((k) => `${k} (${h.inputs[k]})`).join(', ')}; ${why(keys.length > 1 ? 'them' : 'it')}`,
      { file: h.file, field: 'inputs', inputs: keys },
      cause === undefined ? undefined : { cause },
    );
  if (!elicit) {
    const plural = missing.length > 1 ? 's' : '';
    throw lacking(
      missing,
      (them) =>
        `pass ${missing.map((k) => `"${k}"`).join(', ')} as tool argument${plural} (this client cannot be asked for ${them}: it does not support elicitation)`,
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
    throw lacking(missing, () => `asking the user failed: ${(err as Error).message}`, err);
  }
  if (result.action !== 'accept') {
    const did = result.action === 'decline' ? 'declined to give' : 'cancelled the request for';
    throw lacking(missing, (them) => `the user ${did} ${them}`);
  }
  const out = { ...vars };
  const still: string[] = [];
  for (const k of missing) {
    const v = result.content?.[k];
    if (v === undefined || v === null) still.push(k);
    else out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  if (still.length > 0) throw lacking(still, (them) => `the user's answer did not include ${them}`);
  return out;
}

type FormSchema = ElicitRequestFormParams['requestedSchema'];
type FormField = FormSchema['properties'][string];

/** JSON with object keys sorted: two values compare equal whatever order their keys came in. */
const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_, v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

/**
 * One property of an answer schema as a form field, or undefined when a form cannot show it whole:
 * what the SDK's schema of form fields takes, with nothing it would drop (a `pattern`, a choice's
 * description), and enum labels one per value.
 */
function formField(p: unknown): FormField | undefined {
  const r = specTypeSchemas.PrimitiveSchemaDefinition['~standard'].validate(p);
  if (r.issues || sortedJson(r.value) !== sortedJson(p)) return undefined;
  const f = r.value as { enum?: unknown[]; enumNames?: unknown[] };
  if (f.enumNames && f.enumNames.length !== f.enum?.length) return undefined;
  return r.value;
}

/** An answer schema that is an object of primitive fields and choices as a form; undefined when it is not that flat. */
function flatForm(schema: Record<string, unknown>): FormSchema | undefined {
  const props = schema.properties;
  if (schema.type !== 'object' || !props || typeof props !== 'object' || Array.isArray(props))
    return undefined;
  const properties: FormSchema['properties'] = {};
  for (const [k, p] of Object.entries(props)) {
    const f = formField(p);
    if (!f) return undefined;
    properties[k] = f;
  }
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : undefined;
  return required ? { type: 'object', properties, required } : { type: 'object', properties };
}

/** The elicitation form of a run's question: its message, its fields, and whether the answer is the form's JSON. */
export interface AskForm {
  message: string;
  requestedSchema: FormSchema;
  /** True when the form is the answer schema itself (the answer is the form's JSON). */
  whole: boolean;
}

/** A question as a form: choices become an enum field, a flat object schema the form itself, anything else one text field. */
export function askForm(q: AskRequest): AskForm {
  const form = q.schema && !q.choices ? flatForm(q.schema) : undefined;
  const field: FormField = q.choices
    ? { type: 'string', title: q.kind === 'approve' ? 'Approve' : 'Answer', enum: [...q.choices] }
    : {
        type: 'string',
        title: 'Answer',
        ...(q.schema ? { description: `JSON matching ${JSON.stringify(q.schema)}` } : {}),
      };
  const requestedSchema: FormSchema = form ?? {
    type: 'object',
    properties: { answer: field },
    required: ['answer'],
  };
  const message = q.kind === 'approve' ? `Approve? Node "${q.node}" wants to ${q.question}` : q.question;
  return { message, requestedSchema, whole: form !== undefined };
}

/**
 * The answer in a form's result; a declined or cancelled form throws (an approval as
 * APPROVAL_DENIED, a question as DECLINED).
 */
export function askAnswer(q: AskRequest, form: AskForm, result: ElicitResult): string {
  if (result.action !== 'accept') {
    const did = result.action === 'decline' ? 'declined' : 'cancelled';
    if (q.kind === 'approve') {
      throw new HatcheryError('APPROVAL_DENIED', `the user ${did} the approval; nothing ran`, {
        node: q.node,
      });
    }
    throw new HatcheryError('DECLINED', `the user ${did} the question "${q.question.slice(0, 200)}"`, {
      node: q.node,
    });
  }
  const content = result.content ?? {};
  if (form.whole) return JSON.stringify(content);
  const v = content.answer;
  return v === undefined || v === null ? '' : Array.isArray(v) ? v.join(', ') : String(v);
}

/**
 * A run's asker over MCP elicitation (see askForm). A declined or cancelled form fails the run (an
 * approval as APPROVAL_DENIED); a client that cannot be reached leaves it waiting (INPUT_REQUIRED).
 */
export function elicitAsk(elicit: ElicitFn): AskFn {
  return async (q, signal) => {
    const form = askForm(q);
    let result: ElicitResult;
    try {
      result = await elicit(
        { mode: 'form', message: form.message, requestedSchema: form.requestedSchema },
        signal,
      );
    } catch (err) {
      if (signal.aborted) throw err;
      throw new HatcheryError(
        'INPUT_REQUIRED',
        `the client could not be asked (${(err as Error).message}); the run waits for an answer`,
        { node: q.node },
        { cause: err },
      );
    }
    return askAnswer(q, form, result);
  };
}
