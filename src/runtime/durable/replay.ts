/**
 * The events of an execution of a run's workflow that runs the run again after a crash: what an
 * earlier execution did and reported is replayed, and must not be reported twice.
 */
import type { RunEvent, RunListener } from '../../engine/contracts.js';

/**
 * The events of a replay: of a whole recovering execution until its first step runs for real, or of
 * a step made again (a branch) until the first step inside it does. A node that ends during the
 * replay is dropped with its start when the journal holds its end, and reported when the crash lost
 * that record (a journal writes every tenth of a second). The node_starts still open when the replay
 * ends are those of the nodes the crash cut short, reported then. Every other event of the replay
 * (a model_call of a call answered from a checkpoint) is dropped.
 */
export class ReplayFilter {
  private replaying = true;
  private readonly open = new Map<number, RunEvent>();
  /** Where the events go. */
  next: RunListener | undefined;

  /** `ended`: the node executions the journal holds the end of, as `<path>|<seq>` (shared by a run's filters). */
  constructor(readonly ended = new Set<string>()) {}

  /** Takes the node executions whose end the journal holds from its records. */
  recorded(records: readonly Readonly<Record<string, unknown>>[]): void {
    for (const r of records) {
      if (r.type === 'node_end' && typeof r.path === 'string') this.ended.add(`${r.path}|${String(r.seq)}`);
    }
  }

  /** True until the replay ends (live). */
  get active(): boolean {
    return this.replaying;
  }

  wrap(listener: RunListener): RunListener {
    this.next = listener;
    return (e) => this.take(e);
  }

  /** An event: passed on after the replay; held, dropped or passed on during it. */
  take(e: RunEvent): void {
    const listener = this.next;
    if (listener === undefined) return;
    if (!this.replaying) {
      listener(e);
      return;
    }
    if (e.type === 'node_start') {
      this.open.set(e.step, e);
    } else if (e.type === 'node_end') {
      const start = this.open.get(e.step);
      this.open.delete(e.step);
      // Executions not resumable one by one (path undefined) sit inside a step: never reported here.
      if (e.path === undefined || this.ended.has(`${e.path}|${e.seq}`)) return;
      if (start) listener(start);
      listener({ ...e, replayed: false });
    } else if (e.type === 'node_error') {
      this.open.delete(e.step);
    }
  }

  /** A step runs for real: the nodes still open are reported, and everything after. */
  live(): void {
    if (!this.replaying) return;
    this.replaying = false;
    const next = this.next;
    if (next) for (const e of this.open.values()) next(e);
    this.open.clear();
  }
}
