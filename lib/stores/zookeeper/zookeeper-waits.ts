import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { followSignals } from '../../support/follow-signals.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';

/**
 * The store's waits in progress, so that `close()` ends them at once (with a store error) and shutdown
 * never waits for a `waitMs`. Each wait has a signal of its own that close aborts, never a listener on one
 * signal of the store's: a process with more than ten waiters would have Node warn of a leak.
 */
export class ZookeeperWaits {
  private readonly waiting = new Map<AbortController, Promise<unknown>>();
  private closed?: LockStoreUnavailableError;

  /** Runs one wait, on a signal that aborts when the caller's does or the store closes (at once if it has). */
  run(request: QueuedAcquireRequest, wait: (signal: AbortSignal) => Promise<QueuedAcquireOutcome>): Promise<QueuedAcquireOutcome> {
    const ends = new AbortController();
    if (this.closed) ends.abort(this.closed);
    const followed = request.signal ? followSignals(request.signal, ends.signal) : undefined;
    const outcome = wait(followed?.signal ?? ends.signal);
    const settled = outcome.catch(() => undefined).finally(() => {
      followed?.stop();
      this.waiting.delete(ends);
    });
    this.waiting.set(ends, settled);
    return outcome;
  }

  /** Ends every wait, and every one started later; resolves once they have settled. */
  async close(): Promise<void> {
    this.closed ??= new LockStoreUnavailableError('acquire', '*', { cause: new Error('the ZooKeeper store was closed') });
    for (const ends of this.waiting.keys()) ends.abort(this.closed);
    await Promise.all([...this.waiting.values()]);
  }
}
