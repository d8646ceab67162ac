/**
 * How long after a release or a give-up the lock's parent is looked at, and deleted if nothing is left
 * under it. As the server sweeps container nodes, later rather than at once: deleting at every release
 * made every lock of a key in steady use pay the delete and, at its next acquire, three more round trips
 * (the create finds no parent: the parent and the create again). Swept a moment later, a key in use keeps
 * its parent and a key left alone still leaves nothing behind.
 */
export const EMPTY_PARENT_SWEEP_MS = 2_000;

/** Keys whose parent may have been left empty, swept together once `EMPTY_PARENT_SWEEP_MS` has passed. */
export class EmptyParents {
  private readonly keys = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly sweep: (key: string) => void) {}

  add(key: string): void {
    this.keys.add(key);
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), EMPTY_PARENT_SWEEP_MS);
    this.timer.unref();
  }

  /** Sweeps every pending key now (the store closing) and stops the timer. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const keys = [...this.keys];
    this.keys.clear();
    for (const key of keys) this.sweep(key);
  }
}
