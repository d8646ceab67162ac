import { setTimeout as sleep } from 'node:timers/promises';
import { retryDelayMs } from './retry-delay.js';
import { settlesWithin } from './settles-within.js';

/**
 * Clean-ups the store fires without making the caller wait (revoking a released grant's lease or deleting its node, undoing
 * an attempt of unknown outcome), tracked so `close()` can let them finish, for a bounded time.
 */
export class BackgroundTasks {
  private readonly running = new Set<Promise<unknown>>();
  private readonly stopped = new AbortController();

  run(task: () => Promise<unknown>): void {
    const pending = task().catch(() => undefined);
    this.running.add(pending);
    void pending.finally(() => this.running.delete(pending));
  }

  /**
   * Runs `task` until it succeeds, retrying failures with backoff while `until` (epoch ms) has not passed:
   * a lease revoke that met an outage is sent again once etcd answers, instead of leaving the key to
   * its TTL. Past `until` there is nothing left to undo (the lease ran out by itself).
   */
  retry(task: () => Promise<unknown>, until: number): void {
    this.run(async () => {
      for (let failures = 1; ; failures++) {
        try {
          return await task();
        } catch (error) {
          if (this.stopped.signal.aborted || Date.now() >= until) throw error;
          const delay = retryDelayMs(failures);
          await sleep(Math.min(delay, until - Date.now()), undefined, { signal: this.stopped.signal, ref: false });
        }
      }
    });
  }

  /** Waits up to `withinMs` for what is running, then stops every retry. */
  async settle(withinMs: number): Promise<void> {
    if (this.running.size > 0) await settlesWithin(Promise.allSettled([...this.running]), withinMs);
    this.stopped.abort();
  }
}
