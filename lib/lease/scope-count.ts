/** How many scopes run under one lease, and who waits for the last of them to end. */
export class ScopeCount {
  private running = 0;
  private waiters: Array<() => void> = [];

  enter(): void {
    this.running++;
  }

  exit(): void {
    if (--this.running > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Settles once no scope runs (at once when none does). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}
