/**
 * Clean-ups the store fires without making the caller wait (revoking a released grant's lease, undoing
 * an attempt of unknown outcome), tracked so `close()` can let them finish, for a bounded time.
 */
export class BackgroundTasks {
  private readonly running = new Set<Promise<unknown>>();

  run(task: () => Promise<unknown>): void {
    const pending = task().catch(() => undefined);
    this.running.add(pending);
    void pending.finally(() => this.running.delete(pending));
  }

  async settle(withinMs: number): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
    await Promise.race([Promise.allSettled([...this.running]), timeout]);
    clearTimeout(timer);
  }
}
