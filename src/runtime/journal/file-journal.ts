import { redactText } from '../../core/secrets.js';
import type { RunEvent, RunListener } from '../../engine/contracts.js';
import { ConversationCursor } from '../conversations.js';
import { checkClock, epochMs } from './clock.js';
import { addDue, dueWritten } from './due.js';
import { commonModelCall, fastLine, modelCallLine } from './fast-line.js';
import { LARGE_STRING, stringHash } from './fold.js';
import {
  addToPiece,
  commitWrites,
  JournalFile,
  pieceEmpty,
  startPiece,
  threadDrained,
} from './journal-file.js';
import { eventRecord, type RecordContent } from './records.js';
import { plainFrom, RequestKeys } from './request-key.js';
import { nodesJson, runStartLine } from './run-start.js';
import { JOURNAL_VERSION, type JournalRecord, type RunJournal, type RunStatus } from './store.js';
import { journalWriteFailed } from './write-errors.js';

/** Events buffered beyond this are serialized at once instead of waiting for the event loop's turn. */
const MAX_BUFFERED = 8192;
/** What flush returns when its write is done as it returns (written on this thread). */
const WRITTEN: Promise<void> = Promise.resolve();
/**
 * What end() returns: the writes of the turn are waited for only when someone awaits it. A served
 * call's run never does, and a wait per turn woke the write thread and brought a message back from it
 * (about 20 µs of the JavaScript thread per served call at a thousand calls at once).
 */
const ENDED: PromiseLike<void> = {
  // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose (see above)
  then: (done, failed) => dueWritten().then(done, failed),
};
/** Values nested deeper than this are cut (a cyclic or absurd value must not hang a flush). */
const MAX_DEPTH = 64;
/** Fields dropped whole, as redactDeep does: their values are credentials whatever they look like. */
const CREDENTIAL_KEY = /^(authorization|api[-_]?key|x-api-key|cookie|set-cookie)$/i;
/** The same fields in JSON text. */
const CREDENTIAL_FIELD = /"(?:authorization|api[-_]?key|x-api-key|cookie|set-cookie)":/i;
/**
 * Where redactText's authorization-header shapes could start, in a string or in JSON text (where the
 * space after the word may be an escape, and what comes before it too, so no word boundary).
 */
const AUTH_HINT = /(?:bearer|basic)(?:\s|\\[nrtfbu])/i;

/** No strings: a new run's file holds none yet. */
const NONE: readonly string[] = [];

/** What a journal's records of model calls need, made once it has one (see FileJournal.parts). */
interface JournalParts {
  content: RecordContent;
  /** Messages already written per conversation. */
  sent: ConversationCursor;
}

/**
 * The secrets of a list as they appear inside JSON text, where they differ from the secret (quotes and
 * backslashes escaped): worked out once per list, which a store shares with all its journals until
 * its secrets change (a new array then).
 */
const jsonSecretsOnce = new WeakMap<readonly string[], readonly string[]>();
function jsonSecretsOf(secrets: readonly string[]): readonly string[] {
  let json = jsonSecretsOnce.get(secrets);
  if (json === undefined) {
    json = secrets.map((x) => JSON.stringify(x).slice(1, -1)).filter((x, i) => x !== secrets[i]);
    jsonSecretsOnce.set(secrets, json);
  }
  return json;
}

/** A record appended with RunJournal.append, kept in order among the buffered events. */
class Extra {
  /** When it was appended, as performance.now() (see clock.ts): set by push. */
  ts = 0;
  constructor(
    readonly type: string,
    readonly fields: Record<string, unknown>,
  ) {}
}

/**
 * An event that carries no time of its own (`ts`: node and model events do), with the time it came:
 * one object for these few instead of an array of times beside every journal's queue.
 */
class Stamped {
  constructor(
    readonly event: RunEvent,
    readonly ts: number,
  ) {}
}

/**
 * The journal of one run in one JSON-lines file. The listener only pushes the event and its time:
 * serialization, redaction and the write happen in a flush scheduled with setImmediate (or at once
 * when the buffer is large), one append per flush to a descriptor kept open for the run, so a node never waits for the journal.
 */
export class FileJournal implements RunJournal {
  readonly id: string;
  readonly listener: RunListener;
  /** What is to be written, each with its time: an Extra's, a Stamped's, or the event's own `ts`. */
  private queue: (RunEvent | Extra | Stamped)[] = [];
  private scheduled = false;
  /** Set from end() until the turn that writes the last records and closes the file. */
  private ending = false;
  private closed = false;
  /** The file, open for appending from the first flush to the end of the run. */
  private readonly out: JournalFile;
  /** Hashes of the large strings already in the file (made at the first large string: most runs have none). */
  private seen: Set<string> | undefined;
  /** str() as a function, for fastLine. */
  private readonly strOf = (value: string | undefined) => this.str(value);
  /** clean() as a function, for the run_start line. */
  private readonly cleanOf = (value: unknown, depth: number) => this.clean(value, depth);
  /**
   * What eventRecord needs of this journal, and the state of its model calls' keys and prompts: made
   * at the first record that needs them, so a run's journal is a few objects until then (a thousand
   * runs in flight each hold theirs through their model call).
   */
  private parts: JournalParts | undefined;
  /** The secrets as they appear inside JSON text (quotes and backslashes escaped). */
  private readonly jsonSecrets: readonly string[];
  /** The last write error of this thread (a full disk): runs go on. */
  private failed: unknown;

  constructor(
    readonly file: string,
    id: string,
    private readonly secrets: readonly string[],
    /** Told when the journal ends (its last records are written on the next turn: see due.ts). */
    private readonly onEnd: (j: FileJournal) => void,
    first: Extra | undefined,
    seen: Iterable<string> = NONE,
    /** Written before the first record: a newline when the file ends in a line cut short. */
    private lead = '',
  ) {
    this.id = id;
    this.out = new JournalFile(file);
    for (const h of seen) {
      this.seen ??= new Set();
      this.seen.add(h);
    }
    this.jsonSecrets = jsonSecretsOf(secrets);
    if (first) this.push(first);
    this.listener = (e) => {
      if (this.closed) return;
      if (e.type === 'run_start' || e.type === 'run_end') {
        // The top-level run's start and end are the store's own records (meta, end()).
        if (e.depth === 0) return;
        // The run tree's usage object keeps growing after this event.
        if (e.type === 'run_end') e = { ...e, usage: { ...e.usage } };
      } else if ((e.type === 'node_end' && e.replayed === true) || e.type === 'tool_start') return;
      // The time its emitter read for it (node and model events), or now.
      this.push((e as { ts?: number }).ts === undefined ? new Stamped(e, performance.now()) : e);
    };
  }

  /** Builds the record that starts a journal or an attempt. */
  static record(type: string, fields: Record<string, unknown>): Extra {
    return new Extra(type, fields);
  }

  private push(item: RunEvent | Extra | Stamped): void {
    if (item instanceof Extra) item.ts = performance.now();
    this.queue.push(item);
    if (this.queue.length >= MAX_BUFFERED) {
      this.flushNow();
      commitWrites();
    } else this.schedule();
  }

  /** Flushes on the event loop's next turn, with every journal due then (see due.ts). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    addDue(this);
  }

  /** This journal's flush on its turn, and the file's close after the last one (see end). */
  turn(): void {
    this.scheduled = false;
    try {
      this.flushNow();
    } catch (err) {
      // A record that cannot be built, or a write that fails (a full disk), loses this flush, not
      // the other journals' turns.
      this.failed = err;
      journalWriteFailed(this.file, err);
    }
    if (this.ending) {
      this.ending = false;
      this.out.close();
    }
  }

  append(type: string, fields: Record<string, unknown>): void {
    if (!this.closed) this.push(new Extra(type, fields));
  }

  end(status: RunStatus, fields: Record<string, unknown>): PromiseLike<void> {
    if (this.closed) return WRITTEN;
    this.push(new Extra('run_end', { status, ...fields }));
    this.closed = true;
    this.ending = true;
    // Serialized on the loop's next turn, like every record: the run's result never waits for its journal.
    this.schedule();
    this.onEnd(this);
    return ENDED;
  }

  /** The last write error (a full disk), here or on the write thread: runs go on, their records are lost. */
  get error(): unknown {
    return this.failed ?? this.out.threadError;
  }

  /** True once end() was called. */
  get ended(): boolean {
    return this.closed;
  }

  flush(): Promise<void> {
    this.flushNow();
    return threadDrained() ?? WRITTEN;
  }

  /** Builds and writes (or hands to the write thread) what is queued. */
  private flushNow(): void {
    if (this.queue.length === 0) return;
    const queue = this.queue;
    this.queue = [];
    const lead = this.lead;
    this.lead = '';
    checkClock();
    startPiece();
    if (lead !== '') addToPiece(lead, false);
    // Written in pieces of up to 64 KB, each event let go once its line is built: a young-generation
    // GC during a long flush then copies only what is left to write, not every line and event of the
    // run, which it would promote and leave for the old generation's marking during the next runs
    // (measured: 0.4 µs a node of the next run's time in a 1,000-node chain).
    const items: (RunEvent | Extra | Stamped | undefined)[] = queue;
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      const line =
        item instanceof Stamped
          ? this.line(item.event, epochMs(item.ts))
          : this.line(item, epochMs((item as { ts: number }).ts));
      items[i] = undefined;
      if (line === undefined || addToPiece(line, true)) continue;
      if (!pieceEmpty() && !this.write()) return;
      // A line longer than a piece is written alone.
      if (!addToPiece(line, true) && !this.write(`${line}\n`)) return;
    }
    this.write();
  }

  /**
   * Appends the piece gathered (or `text`); false after a failed write, which ends the flush (its
   * records are lost).
   */
  private write(text?: string): boolean {
    try {
      if (text === undefined) this.out.writePiece();
      else this.out.writeText(text);
      return true;
    } catch (err) {
      this.failed = err;
      journalWriteFailed(this.file, err);
      return false;
    }
  }

  /** One JSON line, cleaned of secrets, large strings already written replaced by a reference. */
  private line(item: RunEvent | Extra, at: number): string | undefined {
    if (!(item instanceof Extra) && (item.type === 'node_start' || item.type === 'node_end')) {
      try {
        const fast = fastLine(item, at, this.strOf);
        if (fast !== undefined) return fast;
      } catch {
        // A value JSON cannot hold: the record path below writes what it can.
      }
    }
    if (!(item instanceof Extra) && item.type === 'model_call' && commonModelCall(item)) {
      const { key, prompt } = this.journalParts().content.modelCall(item);
      return modelCallLine(item, at, key, prompt, this.strOf);
    }
    if (item instanceof Extra && item.fields.nodes !== undefined) {
      try {
        if (item.type === 'run_start') {
          const line = runStartLine(item.fields, at, this.secrets, this.strOf, this.cleanOf);
          if (line !== undefined) return line;
        }
        const line = this.withNodes(item, at);
        if (line !== undefined) return line;
      } catch {
        // A value JSON cannot hold: the record path below writes what it can.
      }
    }
    // Events clean only their content fields (names come from the file); other records are cleaned whole.
    const rec = item instanceof Extra ? this.extra(item, at) : this.record(item, at);
    try {
      return JSON.stringify(rec);
    } catch (err) {
      // A value JSON cannot hold (a BigInt) loses the record, not the journal.
      return JSON.stringify({ v: JOURNAL_VERSION, at, type: 'unwritable', of: rec.type, error: String(err) });
    }
  }

  /** A record appended whole (run_start, run_end, resumed...): every field cleaned. */
  private extra(item: Extra, at: number): JournalRecord {
    const rec: Record<string, unknown> = { v: JOURNAL_VERSION, at, type: item.type };
    const fields = item.fields;
    for (const k in fields) {
      const value = fields[k];
      if (value === undefined || typeof value === 'function') continue;
      rec[k] = CREDENTIAL_KEY.test(k) ? '[redacted]' : this.clean(value, 1);
    }
    return rec as JournalRecord;
  }

  /**
   * The line of a record whose `nodes` (a run_start's node hashes: the same frozen object for every run
   * of a loaded file) has its JSON kept: the fields before it and after it are written as two objects
   * and joined around that text, which is exactly JSON.stringify of the whole record (same fields, same
   * order). A 1,000-node file's node hashes cost 0.2 ms per run cleaned, then 0.05 ms as JSON.
   * Undefined when `nodes` is not such a map.
   */
  private withNodes(item: Extra, at: number): string | undefined {
    const nodes = nodesJson(item.fields.nodes, this.secrets, this.cleanOf);
    if (nodes === undefined) return undefined;
    const head: Record<string, unknown> = { v: JOURNAL_VERSION, at, type: item.type };
    let tail: Record<string, unknown> | undefined;
    const fields = item.fields;
    for (const k in fields) {
      const value = fields[k];
      if (value === undefined || typeof value === 'function') continue;
      if (k === 'nodes') {
        tail = {};
        continue;
      }
      // A field named like v, at or type would take their place in one object, not in two.
      if (tail !== undefined && k in head) return undefined;
      (tail ?? head)[k] = CREDENTIAL_KEY.test(k) ? '[redacted]' : this.clean(value, 1);
    }
    if (tail === undefined) return undefined;
    const before = JSON.stringify(head);
    const after = JSON.stringify(tail);
    return `${before.slice(0, -1)},"nodes":${nodes}${after === '{}' ? '}' : `,${after.slice(1)}`}`;
  }

  private record(e: RunEvent, at: number): JournalRecord {
    return eventRecord(e, at, this.journalParts().content);
  }

  /** The parts of this journal made at its first record that needs them (see `parts`). */
  private journalParts(): JournalParts {
    if (this.parts !== undefined) return this.parts;
    const keys = new RequestKeys((text) => !this.mayHold(text) && !CREDENTIAL_FIELD.test(text), this.secrets);
    const parts: JournalParts = {
      sent: new ConversationCursor(),
      content: {
        str: this.strOf,
        clean: this.cleanOf,
        modelCall: (e) => {
          const { key, clean, plain } = keys.key(e);
          return { key, prompt: this.prompt(e, clean, plain) };
        },
      },
    };
    this.parts = parts;
    return parts;
  }

  /** True when a text may hold something redactText removes (most texts do not: they are left alone). */
  private mayHold(s: string): boolean {
    if (s.includes('sk-') || AUTH_HINT.test(s)) return true;
    for (const x of this.secrets) if (s.includes(x)) return true;
    for (const x of this.jsonSecrets) if (s.includes(x)) return true;
    return false;
  }

  /** A content string as written: redacted, and a reference when this large string is in the file already. */
  private str(value: string | undefined): string | { $same: string } | undefined {
    if (value === undefined) return undefined;
    const s = this.mayHold(value) ? redactText(value, this.secrets, { authHeaders: true }) : value;
    if (s.length < LARGE_STRING) return s;
    const h = stringHash(s);
    this.seen ??= new Set();
    if (this.seen.has(h)) return { $same: h };
    this.seen.add(h);
    return s;
  }

  /**
   * What a model call sent, for people reading the run (the studio, `runs show`): the system prompt
   * and messages of a node's first call, then only the messages added since its previous call (the
   * reply and tool results of a tool loop), so a long loop is not written again on every turn.
   * When the request holds nothing to redact (`clean`) and the messages written are plain JSON with no
   * large string, they are written as they are (JSON.stringify gives what the cleaned copy would).
   */
  private prompt(
    e: Extract<RunEvent, { type: 'model_call' }>,
    clean: boolean,
    plain: boolean | undefined,
  ): Record<string, unknown> {
    const { system, messages } = e.request;
    const from = this.journalParts().sent.next(e);
    const sent = from === 0 ? messages : messages.slice(from);
    const asIs = clean && Array.isArray(messages) && (plain ?? plainFrom(messages, from));
    const added = asIs ? sent : this.clean(sent, 0);
    return from === 0 ? { system: this.str(system), messages: added } : { from, messages: added };
  }

  /** A copy of a JSON-like value: strings redacted, credential fields dropped, repeated large strings referenced. */
  private clean(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.str(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > MAX_DEPTH) return '[too deep]';
    if (Array.isArray(value)) {
      // Nothing to copy (a model call's toolCalls mostly): JSON writes it the same.
      if (value.length === 0) return value;
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) out[i] = this.clean(value[i], depth + 1);
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined || typeof v === 'function') continue;
      out[k] = CREDENTIAL_KEY.test(k) ? '[redacted]' : this.clean(v, depth + 1);
    }
    return out;
  }
}
