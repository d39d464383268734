import { addUsage, type Usage } from '../providers/types.js';
import { sha16 } from './canonical.js';
import {
  type JournalRecord,
  type PendingQuestion,
  RUN_STATUSES,
  type RunMeta,
  type RunOwner,
  type RunStatus,
  type RunSummary,
  type StoredRun,
} from './store.js';

/** Strings at least this long are written once per run file; later copies become `{"$same": sha16}`. */
export const LARGE_STRING = 4096;

/**
 * The deepest a journal record may nest. The journal writes records a few levels deep around the
 * values of a run (structured outputs included, which a hatchery file caps at 64 levels); a deeper line
 * was not written by hatchery-mcp, and recursive readers would overflow the stack on it.
 */
export const MAX_RECORD_DEPTH = 128;
/** The longest journal line read, in characters: a longer one is skipped as unreadable. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/** Thrown inside resolve() for a record nested past MAX_RECORD_DEPTH; parseJournal counts the line. */
const TOO_DEEP = Symbol('too deep');

/** What a journal file's text parses to: its records in order, and how many lines were unreadable. */
export interface ParsedJournal {
  records: JournalRecord[];
  corrupt: number;
  /** The large strings of the file by hash (what a reopened journal may reference). */
  strings: Map<string, string>;
}

/**
 * Parses a journal file. A line that is not a JSON record (a write cut short by SIGKILL, a damaged
 * file, a line nested past MAX_RECORD_DEPTH or longer than MAX_LINE_CHARS) is skipped and counted,
 * never thrown: the rest of the run stays readable. Large-string
 * references are resolved against the strings seen before them.
 */
export function parseJournal(text: string): ParsedJournal {
  const records: JournalRecord[] = [];
  const strings = new Map<string, string>();
  let corrupt = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.length > MAX_LINE_CHARS) {
      corrupt++;
      continue;
    }
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      corrupt++;
      continue;
    }
    if (
      rec === null ||
      typeof rec !== 'object' ||
      Array.isArray(rec) ||
      typeof (rec as JournalRecord).type !== 'string'
    ) {
      corrupt++;
      continue;
    }
    try {
      records.push(resolve(rec, strings, 0) as JournalRecord);
    } catch (err) {
      if (err !== TOO_DEEP) throw err;
      corrupt++;
    }
  }
  return { records, corrupt, strings };
}

function resolve(v: unknown, strings: Map<string, string>, depth: number): unknown {
  if (typeof v === 'string') {
    if (v.length >= LARGE_STRING) {
      const h = sha16(v);
      if (!strings.has(h)) strings.set(h, v);
    }
    return v;
  }
  if (v === null || typeof v !== 'object') return v;
  if (depth >= MAX_RECORD_DEPTH) throw TOO_DEEP;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = resolve(v[i], strings, depth + 1);
    return v;
  }
  const o = v as Record<string, unknown>;
  const same = o.$same;
  if (typeof same === 'string' && Object.keys(o).length === 1) {
    const s = strings.get(same);
    if (s !== undefined) return s;
  }
  for (const k of Object.keys(o)) o[k] = resolve(o[k], strings, depth + 1);
  return o;
}

const STATUSES: ReadonlySet<RunStatus> = new Set(RUN_STATUSES);

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A usage record as numbers only: a damaged or forged field must not turn a sum into a string. */
function usageOf(v: unknown): Usage | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  const u = v as Record<string, unknown>;
  const out: Usage = { inputTokens: num(u.inputTokens) ?? 0, outputTokens: num(u.outputTokens) ?? 0 };
  const cached = num(u.cachedInputTokens);
  if (cached !== undefined) out.cachedInputTokens = cached;
  const cost = num(u.costUsd);
  if (cost !== undefined) out.costUsd = cost;
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The process that owns the run now: the last attempt's (a resume makes its process the owner). */
export function ownerOf(meta: RunMeta, records: readonly JournalRecord[]): RunOwner {
  for (let i = records.length - 1; i > 0; i--) {
    const r = records[i]!;
    if (r.type === 'resumed' && r.owner && typeof r.owner === 'object') return r.owner as RunOwner;
  }
  return meta.owner;
}

/** Adds up a run's records into its summary; `corrupt` unreadable lines are noted in it. */
export function foldRun(meta: RunMeta, records: readonly JournalRecord[], corrupt = 0): RunSummary {
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  const s: RunSummary = {
    id: meta.id,
    hatchery: meta.hatchery,
    file: meta.file,
    status: 'running',
    source: meta.source,
    startedAt: meta.startedAt,
    steps: 0,
    usage,
    attempts: 1,
  };
  let open: string | undefined;
  let last: string | undefined;
  // The usage of each attempt: a resumed run reports its total and what each attempt spent.
  const attempts: Usage[] = [{ inputTokens: 0, outputTokens: 0 }];
  for (const r of records) {
    switch (r.type) {
      case 'node_start':
        if (r.depth === 0) open = str(r.node);
        break;
      case 'node_end':
        s.steps++;
        if (r.depth === 0) {
          last = str(r.node);
          if (open === last) open = undefined;
        }
        break;
      case 'model_call': {
        const u = usageOf(r.usage);
        addUsage(usage, u);
        addUsage(attempts[attempts.length - 1]!, u);
        break;
      }
      case 'resumed':
        // A durable engine running the run again after a crash goes on with the same attempt.
        if (r.recovered !== true) {
          s.attempts++;
          attempts.push({ inputTokens: 0, outputTokens: 0 });
        }
        s.status = 'running';
        open = undefined;
        delete s.endedAt;
        delete s.error;
        delete s.code;
        delete s.question;
        break;
      case 'interrupted':
        s.status = 'interrupted';
        s.endedAt = r.at;
        break;
      case 'input_required':
        if (r.question && typeof r.question === 'object') s.question = r.question as PendingQuestion;
        break;
      case 'cancelled':
        s.status = 'cancelled';
        s.endedAt = r.at;
        break;
      case 'run_end': {
        const status = r.status as RunStatus;
        s.status = STATUSES.has(status) && status !== 'running' ? status : 'failed';
        s.endedAt = r.at;
        const output = str(r.output);
        if (output !== undefined) s.output = output;
        const error = str(r.error);
        if (error !== undefined) s.error = error;
        const code = str(r.code);
        if (code !== undefined) s.code = code;
        const node = str(r.node);
        if (node !== undefined) open = node;
        if (r.question && typeof r.question === 'object') s.question = r.question as PendingQuestion;
        break;
      }
    }
  }
  const node = open ?? last;
  if (node !== undefined) s.node = node;
  if (attempts.length > 1) s.attemptUsage = attempts;
  if (s.status !== 'input_required') delete s.question;
  if (corrupt > 0) s.corruptLines = corrupt;
  return s;
}

/** A run's meta, records and summary from its file's text; undefined when its first record is unreadable. */
export function storedRun(text: string): StoredRun | undefined {
  const { records, corrupt } = parseJournal(text);
  // The meta is the first record's fields, when that record is a readable run_start.
  const first = records[0];
  if (first?.type !== 'run_start' || typeof first.id !== 'string') return undefined;
  const { v: _v, at: _at, type: _type, ...fields } = first;
  const meta = fields as unknown as RunMeta;
  return { meta, records, summary: foldRun(meta, records, corrupt) };
}
