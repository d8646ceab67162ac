/**
 * A sleep until an epoch-ms time that `fire` (a notification) or an abort cuts short. A notification that
 * comes while nobody sleeps is kept for the next sleep, so one that arrives during a store call is not lost.
 */
export class Wake {
  private pending = false;
  private done?: () => void;

  fire(): void {
    this.pending = true;
    this.done?.();
  }

  /** Resolves when `until` is reached, on a notification, or when `signal` aborts (at once if any of them is already so). */
  wait(until: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.pending || signal?.aborted || until <= Date.now()) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        this.done = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(finish, until - Date.now());
      signal?.addEventListener('abort', finish);
      this.done = finish;
    });
  }
}
