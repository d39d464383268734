/**
 * The live view on a terminal: the frame of the run tree redrawn in place by log-update (which owns
 * the cursor codes, wrapping and resizes), at most about ten times a second: on events, and on a timer
 * while something runs (spinners, elapsed times, retry countdowns). Texts printed meanwhile (--verbose)
 * go above the frame; a question on the terminal pauses it.
 */
import type { RunTree } from '../../runtime/run-tree.js';
import { renderFrame } from './frame.js';
import type { Paint } from './style.js';

/** The least time between two redraws, in milliseconds. */
export const REDRAW_MS = 100;

/** The stream the view draws on: a terminal, with its size. */
export interface TerminalStream {
  write(chunk: string): unknown;
  columns?: number;
  rows?: number;
  isTTY?: boolean;
}

type LogUpdate = ((...text: string[]) => void) & { clear(): void; done(): void };

/** A run tree drawn live on a terminal stream. */
export class LiveView {
  private last = 0;
  private readonly timer: NodeJS.Timeout;
  private paused = false;
  private ended = false;

  private constructor(
    private readonly log: LogUpdate,
    private readonly stream: TerminalStream,
    private readonly tree: RunTree,
    private readonly p: Paint,
    private readonly clock: () => number,
  ) {
    // Unref'd: the run keeps the process alive, the view never does.
    this.timer = setInterval(() => this.draw(), REDRAW_MS);
    this.timer.unref();
  }

  /** Starts drawing `tree` on `stream`; log-update is imported only now, on a terminal. */
  static async open(
    stream: TerminalStream,
    tree: RunTree,
    p: Paint,
    clock: () => number = Date.now,
  ): Promise<LiveView> {
    const { createLogUpdate } = await import('log-update');
    // A terminal that reports no size (0 x 0, as some pseudo-terminals do) gets a common one: with 0
    // rows log-update would cut every line of the frame away.
    const sized = {
      write: (chunk: string) => stream.write(chunk),
      get columns() {
        return stream.columns || 80;
      },
      get rows() {
        return stream.rows || 24;
      },
      isTTY: true,
    };
    return new LiveView(
      createLogUpdate(sized as unknown as NodeJS.WriteStream) as LogUpdate,
      stream,
      tree,
      p,
      clock,
    );
  }

  /** Something changed: redraw now, unless the last redraw was under REDRAW_MS ago (the timer will). */
  changed(): void {
    if (this.clock() - this.last >= REDRAW_MS) this.draw();
  }

  /** Writes `text` above the frame, which is drawn again below it. */
  print(text: string): void {
    if (this.ended) {
      this.stream.write(`${text}\n`);
      return;
    }
    this.log.clear();
    this.stream.write(`${text}\n`);
    this.last = 0;
    this.draw();
  }

  /** Clears the frame and stops drawing until resume() (a question is being asked on the terminal). */
  pause(): void {
    if (this.ended || this.paused) return;
    this.paused = true;
    this.log.clear();
    this.log.done();
  }

  /** Draws again after pause(). */
  resume(): void {
    if (this.ended || !this.paused) return;
    this.paused = false;
    this.draw();
  }

  /** Draws the final frame and leaves it on the terminal; later writes go below it. */
  finish(): void {
    if (this.ended) return;
    this.paused = false;
    this.draw();
    this.stop();
    this.log.done();
  }

  private draw(): void {
    if (this.paused || this.ended) return;
    this.last = this.clock();
    const size = { columns: this.stream.columns || 80, rows: this.stream.rows || 24, now: this.last };
    try {
      this.log(renderFrame(this.tree, size, this.p));
    } catch {
      // A view that cannot draw (a closed terminal) stops drawing; it never fails the run or the timer.
      this.stop();
    }
  }

  private stop(): void {
    this.ended = true;
    clearInterval(this.timer);
  }
}
