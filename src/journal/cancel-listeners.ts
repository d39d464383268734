/** The listeners a store tells of cancels of the runs its process runs (RunStore.onCancel). */
export class CancelListeners {
  private readonly listeners: ((id: string) => void)[] = [];

  /** Calls `listener` with the id of each run of this process whose cancel was asked for. */
  onCancel(listener: (id: string) => void): void {
    this.listeners.push(listener);
  }

  /** Tells every listener that run `id` is to be cancelled. */
  fire(id: string): void {
    for (const l of this.listeners) {
      try {
        l(id);
      } catch {
        // One broken listener must not keep the others from stopping the run.
      }
    }
  }
}
