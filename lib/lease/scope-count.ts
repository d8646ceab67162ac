interface IdleWaiter {
  /** How many scopes may still run: the caller's own, when a scope releases its lease itself. */
  readonly allowed: number;
  readonly resolve: () => void;
}

/** How many scopes run under one lease, and who waits for them to end. */
export class ScopeCount {
  private running = 0;
  private waiters?: IdleWaiter[];

  enter(): void {
    this.running++;
  }

  exit(): void {
    this.running--;
    if (!this.waiters) return;
    const ready = this.waiters.filter((waiter) => this.running <= waiter.allowed);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => this.running > waiter.allowed);
    if (this.waiters.length === 0) this.waiters = undefined;
    for (const waiter of ready) waiter.resolve();
  }

  /** True when no more than `allowed` scopes run. */
  idle(allowed = 0): boolean {
    return this.running <= allowed;
  }

  /** Settles once no more than `allowed` scopes run. */
  whenIdle(allowed = 0): Promise<void> {
    if (this.running <= allowed) return Promise.resolve();
    return new Promise<void>((resolve) => (this.waiters ??= []).push({ allowed, resolve }));
  }
}
