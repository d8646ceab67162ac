import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { followSignals } from '../../support/follow-signals.js';
import type { AcquireResult, QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import type { EtcdStoreContext } from './etcd-store-context.js';

/**
 * The store's acquisitions in flight, so that `close()` ends them cleanly: waits end at once (with a store
 * error), single attempts are let finish (each is a few round trips under the per-command timeout), and a
 * grant one of them receives after close began is given back (its lease revoked, before the store's
 * clean-ups are let finish) and refused: nothing granted outlives close unwatched.
 */
export class EtcdCallsInFlight {
  private readonly closing = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  /**
   * Every wait in progress, by the controller that close aborts: one signal per wait, never a listener per
   * waiter on the store's one closing signal (more than ten waiters would have Node warn of a leak).
   */
  private readonly waits = new Set<AbortController>();

  constructor(private readonly context: EtcdStoreContext) {}

  /** A single attempt of `token` at `key`; refused once close began. */
  async attempt(key: string, token: string, run: () => Promise<AcquireResult>): Promise<AcquireResult> {
    this.closing.signal.throwIfAborted();
    const pending = run();
    this.track(pending);
    const result = await pending;
    if (result.acquired && this.closing.signal.aborted) {
      const grant = this.context.grants.get(key, token);
      if (grant) this.context.forget(token, grant);
      throw this.closing.signal.reason;
    }
    return result;
  }

  /**
   * Runs one queued wait. Closing the store ends every wait at once (with a store error), so shutdown never
   * waits for waitMs: each wait has a signal of its own that close aborts.
   */
  wait(request: QueuedAcquireRequest, wait: (signal: AbortSignal) => Promise<QueuedAcquireOutcome>): Promise<QueuedAcquireOutcome> {
    const ends = new AbortController();
    if (this.closing.signal.aborted) ends.abort(this.closing.signal.reason);
    const followed = request.signal ? followSignals(request.signal, ends.signal) : undefined;
    this.waits.add(ends);
    const outcome = wait(followed?.signal ?? ends.signal);
    void this.track(outcome).finally(() => {
      followed?.stop();
      this.waits.delete(ends);
    });
    return outcome;
  }

  /** Ends every wait and refuses new calls; resolves once every call in flight has settled (and queued its clean-up). */
  async close(): Promise<void> {
    this.closing.abort(new LockStoreUnavailableError('acquire', '*', { cause: new Error('the etcd store was closed') }));
    for (const ends of this.waits) ends.abort(this.closing.signal.reason);
    await Promise.all([...this.running]);
  }

  /** Keeps `pending` until it settles; the returned promise settles with it and never rejects. */
  private track(pending: Promise<unknown>): Promise<void> {
    const settled = pending.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.finally(() => this.running.delete(settled));
    return settled;
  }
}
