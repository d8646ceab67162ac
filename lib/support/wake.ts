/**
 * A sleep until an epoch-ms time that `fire` (a notification) or an abort cuts short. A notification that
 * comes while nobody sleeps is kept for the next sleep, so one that arrives during a store call is not lost.
 * Shared by every waiter that sleeps between store calls (the Redis retry loop and fair queue, etcd's queue).
 */
export class Wake {
  /** Notifications so far, for callers that tell a quiet sleep from a woken one across several sleeps. */
  count = 0;
  private pending = false;
  private done?: () => void;

  fire(): void {
    this.count++;
    this.pending = true;
    this.done?.();
  }

  /**
   * Resolves when `until` is reached, on a notification, or when `signal` aborts (at once if any of them is
   * already so): true when a notification ended it.
   */
  wait(until: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.pending || signal?.aborted || until <= Date.now()) {
      const notified = this.pending;
      this.pending = false;
      return Promise.resolve(notified);
    }
    return new Promise<boolean>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        this.done = undefined;
        const notified = this.pending;
        this.pending = false;
        resolve(notified);
      };
      const timer = setTimeout(finish, until - Date.now());
      signal?.addEventListener('abort', finish);
      this.done = finish;
    });
  }
}
