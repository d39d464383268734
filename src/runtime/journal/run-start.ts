/**
 * The first line of a new run's journal (run_start), with the JSON of what every run of a loaded file
 * shares kept once: its name, file, hash and node hashes (the same frozen map for every run of the
 * file). Per run only the id, times, source, owner and inputs are written. The text is exactly what
 * JSON.stringify gives for the record FileJournal builds from the same fields (same fields, same
 * order, every string cleaned the same way); any other shape gives undefined and takes that path.
 */
import { LARGE_STRING } from './fold.js';
import { JOURNAL_VERSION } from './store.js';

/** A journal's cleaning of one content string (redaction, a reference to a large string written already). */
type Str = (value: string | undefined) => string | { $same: string } | undefined;
/** A journal's cleaning of any value (see FileJournal.clean). */
type Clean = (value: unknown, depth: number) => unknown;

/**
 * The JSON of cleaned frozen values (a loaded file's node hashes), with the secret list they were
 * cleaned of: immutable both, so journals of any run may share them.
 */
const cleanedOnce = new WeakMap<object, { secrets: readonly string[]; json: string }>();

/** What the runs of one file share in their run_start line, per node-hash map: `"hatchery":...,"nodes":{...}`. */
interface Shared {
  secrets: readonly string[];
  hatchery: string;
  file: string;
  hash: string;
  json: string;
}
const sharedOnce = new WeakMap<object, Shared>();

/** The fields of a run_start in the order runMeta makes them; `input` and `vars` may be left out. */
const FIELDS = ['id', 'hatchery', 'file', 'hash', 'nodes', 'source', 'startedAt', 'owner', 'input', 'vars'];
const OPTIONAL_FROM = 8;
/** The fields of a run owner (processOwner), in order. */
const OWNER = ['pid', 'host', 'since'];

/** A number as JSON writes it. */
const num = (n: number): string => (Number.isFinite(n) ? `${n}` : 'null');

/**
 * The JSON of clean() of a frozen map of short strings, kept per map and secret list (short strings
 * are never written as references to earlier copies, so it is the same for every journal).
 * Undefined when `value` is not such a map.
 */
export function nodesJson(value: unknown, secrets: readonly string[], clean: Clean): string | undefined {
  if (value === null || typeof value !== 'object' || !Object.isFrozen(value)) return undefined;
  const kept = cleanedOnce.get(value);
  if (kept !== undefined && sameList(kept.secrets, secrets)) return kept.json;
  // Frozen: what is checked here cannot change after.
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v !== 'string' || v.length >= LARGE_STRING) return undefined;
  }
  const json = JSON.stringify(clean(value, 1));
  cleanedOnce.set(value, { secrets, json });
  return json;
}

/** A short string's JSON once cleaned (never a reference: short strings are not remembered). */
function shortJson(s: unknown, str: Str): string | undefined {
  if (typeof s !== 'string' || s.length >= LARGE_STRING) return undefined;
  return JSON.stringify(str(s));
}

/** The shared part of the line, kept per node-hash map and checked against this run's fields. */
function sharedJson(f: Record<string, unknown>, secrets: readonly string[], str: Str, clean: Clean) {
  const nodes = f.nodes as object;
  const kept = sharedOnce.get(nodes);
  if (
    kept !== undefined &&
    kept.hatchery === f.hatchery &&
    kept.file === f.file &&
    kept.hash === f.hash &&
    sameList(kept.secrets, secrets)
  )
    return kept.json;
  const map = nodesJson(nodes, secrets, clean);
  const hatchery = shortJson(f.hatchery, str);
  const file = shortJson(f.file, str);
  const hash = shortJson(f.hash, str);
  if (map === undefined || hatchery === undefined || file === undefined || hash === undefined)
    return undefined;
  const json = `"hatchery":${hatchery},"file":${file},"hash":${hash},"nodes":${map}`;
  sharedOnce.set(nodes, {
    secrets,
    hatchery: f.hatchery as string,
    file: f.file as string,
    hash: f.hash as string,
    json,
  });
  return json;
}

/**
 * The run_start line of `fields` (a RunMeta without budget or trace), or undefined when they have
 * another shape. Nothing is cleaned before every check passed: str() remembers the large strings it
 * wrote, so the record path taken instead must be the first to clean them.
 */
export function runStartLine(
  fields: Record<string, unknown>,
  at: number,
  secrets: readonly string[],
  str: Str,
  clean: Clean,
): string | undefined {
  let i = 0;
  for (const k in fields) {
    if (k !== FIELDS[i]) {
      // An optional field left out (only input): vars may follow.
      if (i === OPTIONAL_FROM && k === 'vars') i++;
      else return undefined;
    }
    i++;
  }
  if (i < OPTIONAL_FROM) return undefined;
  const { id, source, startedAt, owner, input, vars } = fields;
  if (typeof id !== 'string' || typeof source !== 'string' || typeof startedAt !== 'number') return undefined;
  if (input !== undefined && typeof input !== 'string') return undefined;
  if (owner === null || typeof owner !== 'object') return undefined;
  const { pid, host, since } = owner as Record<string, unknown>;
  if (typeof pid !== 'number' || typeof since !== 'number') return undefined;
  let o = 0;
  for (const k in owner) if (k !== OWNER[o++]) return undefined;
  if (o !== OWNER.length) return undefined;
  let emptyVars = true;
  if (vars !== undefined) {
    if (vars === null || typeof vars !== 'object' || Array.isArray(vars)) return undefined;
    for (const k in vars) {
      emptyVars = false;
      if (typeof (vars as Record<string, unknown>)[k] !== 'string') return undefined;
    }
  }
  const hostJson = shortJson(host, str);
  const shared = sharedJson(fields, secrets, str, clean);
  if (hostJson === undefined || shared === undefined) return undefined;
  // Cleaned in the record's order from here (id, source, input, vars), as the record path does.
  let text = `{"v":${JOURNAL_VERSION},"at":${num(at)},"type":"run_start","id":${JSON.stringify(str(id))},${shared},"source":${JSON.stringify(str(source))},"startedAt":${num(startedAt)},"owner":{"pid":${num(pid)},"host":${hostJson},"since":${num(since)}}`;
  if (input !== undefined) text += `,"input":${JSON.stringify(str(input))}`;
  if (vars !== undefined) text += `,"vars":${emptyVars ? '{}' : JSON.stringify(clean(vars, 1))}`;
  return `${text}}`;
}

/** True when both lists hold the same strings in the same order (a store's secrets: a few). */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
