import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { followSignals } from '../../support/follow-signals.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';

/**
 * A store's waits in its own queue (etcd, ZooKeeper), so that `close()` ends them at once (with a store
 * error) and shutdown never waits for a `waitMs`. Each wait has a signal of its own that close aborts, never
 * a listener on one signal of the store's: a process with more than ten waiters would have Node warn of a
 * leak (test/stores/many-waiters.scenarios.ts).
 */
export class StoreWaits {
  private readonly waiting = new Map<AbortController, Promise<unknown>>();
  private closed?: LockStoreUnavailableError;

  /** `store` names the store in the error a wait ends with at close: 'etcd', 'ZooKeeper'. */
  constructor(private readonly store: string) {}

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
    this.closed ??= new LockStoreUnavailableError('acquire', '*', { cause: new Error(`the ${this.store} store was closed`) });
    for (const ends of this.waiting.keys()) ends.abort(this.closed);
    await Promise.all([...this.waiting.values()]);
  }
}
