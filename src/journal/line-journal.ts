import { redactText } from '../core/secrets.js';
import type { RunEvent, RunListener } from '../engine/contracts.js';
import { CREDENTIAL_KEY, sha16 } from './canonical.js';
import { ConversationCursor } from './conversations.js';
import { LARGE_STRING } from './fold.js';
import { eventRecord, type RecordContent } from './records.js';
import { plainFrom, RequestKeys } from './request-key.js';
import { JOURNAL_VERSION, type JournalRecord, type RunJournal, type RunStatus } from './store.js';

/** Records queued beyond this are written at once instead of on the next turn. */
const MAX_QUEUED = 8192;
/** Values nested deeper than this are cut (a cyclic or absurd value must not hang a flush). */
const MAX_DEPTH = 64;
/** The fields of CREDENTIAL_KEY in JSON text. */
const CREDENTIAL_FIELD = /"(?:authorization|api[-_]?key|x-api-key|cookie|set-cookie)":/i;
/**
 * Where redactText's authorization-header shapes could start, in a string or in JSON text (where the
 * space after the word may be an escape, and what comes before it too, so no word boundary).
 */
const AUTH_HINT = /(?:bearer|basic)(?:\s|\\[nrtfbu])/i;

/** A record appended with RunJournal.append (or the first of a journal), kept in order among the events. */
export class Extra {
  constructor(
    readonly type: string,
    readonly fields: Record<string, unknown>,
  ) {}
}

/**
 * Where a journal's text goes: each flush's lines are handed over in order; a store keeps them in a
 * file (journal-file.ts) or a database table (postgres/). A failed write is reported to the function
 * the sink was opened with, and the run goes on.
 */
export interface JournalSink {
  /** Appends `text` (whole lines) after everything handed over before. */
  write(text: string): void;
  /** Resolves once everything handed over so far is stored (or failed). */
  idle(): Promise<void>;
  /** Releases the sink once everything handed over is stored: the run ended with `status`. */
  close(status: RunStatus): void;
}

/** What a LineJournal starts with besides its sink and run id. */
export interface LineJournalOptions {
  /** Values never written (API keys): redacted wherever they appear. */
  readonly secrets: readonly string[];
  /** Told when the journal ends, with what settles once its last records are written. */
  readonly onEnd: (j: LineJournal, written: Promise<void>) => void;
  /** The first record (run_start, or resumed when the file exists). */
  readonly first?: Extra;
  /** Hashes of the large strings the file already holds (a resumed run's). */
  readonly seen?: Iterable<string>;
  /** Written before the first record: a newline when the file ends in a line cut short. */
  readonly lead?: string;
}

/**
 * The journal of one run as JSON lines, handed to its store's sink. The listener only queues the event and its time:
 * each record is built (JSON.stringify of one plain object, secrets redacted) on a later turn of the
 * event loop, and the turn's lines are handed to the sink in one write, so a node never waits for
 * the journal.
 */
export class LineJournal implements RunJournal {
  readonly listener: RunListener;
  /** What is to be written, in order, and when each came (ms since the epoch). */
  private queue: (RunEvent | Extra)[] = [];
  private times: number[] = [];
  private scheduled = false;
  private closed = false;
  private readonly out: JournalSink;
  /** How the run ended (set by end()), for the sink's close. */
  private status: RunStatus = 'running';
  /** Hashes of the large strings already in the file (made at the first large string: most runs have none). */
  private seen: Set<string> | undefined;
  /** What eventRecord needs of this journal. */
  private readonly content: RecordContent;
  /** The keys of this run's model calls, made at its first. */
  private keys: RequestKeys | undefined;
  /** Messages already written per conversation. */
  private readonly sent = new ConversationCursor();
  /** The secrets as they appear inside JSON text (quotes and backslashes escaped). */
  private readonly jsonSecrets: readonly string[];
  /** The last write error (a full disk): runs go on. */
  private failed: unknown;

  private readonly secrets: readonly string[];
  /** Written before the first record: a newline when the file ends in a line cut short. */
  private lead: string;

  constructor(
    open: (failed: (err: unknown) => void) => JournalSink,
    readonly id: string,
    private readonly opts: LineJournalOptions,
  ) {
    this.secrets = opts.secrets;
    this.lead = opts.lead ?? '';
    this.out = open((err) => {
      this.failed = err;
    });
    if (opts.seen) this.seen = new Set(opts.seen);
    const secrets = opts.secrets;
    this.jsonSecrets = secrets.map((x) => JSON.stringify(x).slice(1, -1)).filter((x, i) => x !== secrets[i]);
    this.content = {
      clean: (value, depth) => this.clean(value, depth),
      modelCall: (e) => {
        this.keys ??= new RequestKeys(
          (text) => !this.mayHold(text) && !CREDENTIAL_FIELD.test(text),
          this.secrets,
        );
        const { key, clean, plain } = this.keys.key(e);
        return { key, prompt: this.prompt(e, clean, plain) };
      },
    };
    if (opts.first) this.push(opts.first);
    this.listener = (e) => {
      if (this.closed) return;
      if (e.type === 'run_start' || e.type === 'run_end') {
        // The top-level run's start and end are the store's own records (meta, end()).
        if (e.depth === 0) return;
        // The run tree's usage object keeps growing after this event.
        if (e.type === 'run_end') e = { ...e, usage: { ...e.usage } };
      } else if ((e.type === 'node_end' && e.replayed === true) || e.type === 'tool_start') return;
      this.push(e);
    };
  }

  private push(item: RunEvent | Extra): void {
    this.queue.push(item);
    this.times.push(Date.now());
    // A run that never lets the event loop turn (a long chain of instant nodes) is written as it goes.
    if (this.queue.length >= MAX_QUEUED) this.flushNow();
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  /** Writes what is queued, on the turn after it came; closes the sink after the last records. */
  private readonly turn = (): void => {
    this.scheduled = false;
    this.flushNow();
    if (this.closed) this.out.close(this.status);
  };

  append(type: string, fields: Record<string, unknown>): void {
    if (!this.closed) this.push(new Extra(type, fields));
  }

  end(status: RunStatus, fields: Record<string, unknown>): Promise<void> {
    if (this.closed) return this.out.idle();
    this.push(new Extra('run_end', { status, ...fields }));
    this.closed = true;
    this.status = status;
    // Written on the next turn, like every record: the run's result never waits for its journal. This
    // immediate comes after the turn's, so the sink is written and closed when the promise settles.
    const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.out.idle());
    this.opts.onEnd(this, written);
    return written;
  }

  /** The last write error (a full disk): runs go on, their records are lost. */
  get error(): unknown {
    return this.failed;
  }

  flush(): Promise<void> {
    this.flushNow();
    return this.out.idle();
  }

  written(): Promise<void> {
    return this.out.idle();
  }

  /** Builds the lines of what is queued and hands them to the sink in one write. */
  private flushNow(): void {
    if (this.queue.length === 0) return;
    const queue = this.queue;
    const times = this.times;
    this.queue = [];
    this.times = [];
    let text = this.lead;
    this.lead = '';
    for (let i = 0; i < queue.length; i++) {
      const item = queue[i]!;
      text += `${this.line(item, times[i]!)}\n`;
    }
    this.out.write(text);
  }

  /** One JSON line, cleaned of secrets, large strings already written replaced by a reference. */
  private line(item: RunEvent | Extra, at: number): string {
    try {
      return JSON.stringify(
        item instanceof Extra ? this.extra(item, at) : eventRecord(item, at, this.content),
      );
    } catch (err) {
      // A value JSON cannot hold (a BigInt) loses the record, not the journal.
      return JSON.stringify({
        v: JOURNAL_VERSION,
        at,
        type: 'unwritable',
        of: item.type,
        error: String(err),
      });
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
    const h = sha16(s);
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
    const from = this.sent.next(e);
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
