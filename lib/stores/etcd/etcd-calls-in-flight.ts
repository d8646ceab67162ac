import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { StoreWaits } from '../queue/store-waits.js';
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
  private readonly waits = new StoreWaits('etcd');

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

  /** Runs one queued wait, which closing the store ends at once (with a store error; see StoreWaits). */
  wait(request: QueuedAcquireRequest, wait: (signal: AbortSignal) => Promise<QueuedAcquireOutcome>): Promise<QueuedAcquireOutcome> {
    return this.waits.run(request, wait);
  }

  /** Ends every wait and refuses new calls; resolves once every call in flight has settled (and queued its clean-up). */
  async close(): Promise<void> {
    this.closing.abort(new LockStoreUnavailableError('acquire', '*', { cause: new Error('the etcd store was closed') }));
    await Promise.all([this.waits.close(), ...this.running]);
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
