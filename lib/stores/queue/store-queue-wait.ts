import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { retryDelayMs } from '../../support/retry-delay.js';
import { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';

/** Round trips of one queued acquisition so far, counted by its looks. */
export interface QueueAttempts {
  count: number;
}

/** What one look at a queue the store keeps found. */
export type QueueLook =
  /** Nothing is left before the place: `take` makes it the holder's grant and says so. */
  | { readonly take: (attempts: number) => QueuedAcquireOutcome }
  /** Look again at once: the place went (it is given up, or joins again at the back) or its watch could not be set. */
  | 'again'
  /** Behind a predecessor whose watch is set (its deletion fires the wake): look again by `lookBy` at the latest. */
  | { readonly lookBy?: number };

/** One waiter's place in a store-kept queue (etcd's waiter keys, ZooKeeper's sequential nodes). */
export interface QueuePlace {
  /** Joins if it has no place, reads where it stands, and watches its predecessor. Store failures reject with `LockStoreUnavailableError`. */
  look(wake: Wake, attempts: QueueAttempts): Promise<QueueLook>;
  /** The wait is over: stops watching, and gives the place up unless it was granted. */
  end(granted: boolean): void;
}

/**
 * When a waiter looks at the queue again though no watch fired (in case one missed a deletion): `firstMs`
 * after a look, doubling while nothing happens, at most `maxMs`, each pause shortened by up to half (jitter).
 */
export interface QueueRechecks {
  readonly firstMs: number;
  readonly maxMs: number;
}

/** A rare safety net, never a steady poll: 500 ms doubling to 5 s. */
export const QUEUE_RECHECKS: QueueRechecks = { firstMs: 500, maxMs: 5_000 };

/**
 * A fair wait in a queue the store keeps (etcd's `concurrency.Mutex`, Curator's `InterProcessMutex`): the
 * waiter watches only the place just before its own, so a release wakes exactly the next waiter, whichever
 * application it belongs to. Between watch events it looks again now and then, less often while nothing
 * happens, in case a watch missed one. The first look always runs, however close the deadline (one full
 * attempt, as a plain acquire makes); after that the wait ends at the deadline or on abort, giving its
 * place up. Store errors are retried with backoff until the deadline, and the last one is what the caller
 * gets if no look succeeded after it.
 */
export async function waitInStoreQueue(request: QueuedAcquireRequest, place: QueuePlace, rechecks = QUEUE_RECHECKS): Promise<QueuedAcquireOutcome> {
  const { deadline, signal } = request;
  const wake = new Wake();
  const attempts: QueueAttempts = { count: 0 };
  let failures = 0;
  let quietRechecks = 0;
  let lastError: LockStoreUnavailableError | undefined;
  let granted = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      if (attempts.count > 0 && Date.now() >= deadline) break;
      try {
        const seen = wake.count;
        const looked = await place.look(wake, attempts);
        if (looked === 'again') continue;
        if ('take' in looked) {
          signal?.throwIfAborted();
          granted = true;
          return looked.take(attempts.count);
        }
        failures = 0;
        lastError = undefined;
        const recheckMs = Math.min(rechecks.maxMs, rechecks.firstMs * 2 ** quietRechecks) * (0.5 + Math.random() / 2);
        await wake.wait(Math.min(deadline, looked.lookBy ?? Infinity, Date.now() + recheckMs), signal);
        quietRechecks = wake.count === seen ? Math.min(quietRechecks + 1, 8) : 0;
      } catch (error) {
        if (!(error instanceof LockStoreUnavailableError)) throw error;
        lastError = error;
        failures++;
        await wake.wait(Math.min(deadline, Date.now() + retryDelayMs(failures)), signal);
      }
    }
    if (lastError) throw lastError;
    return { result: { acquired: false, ttlMs: -1 }, attempts: attempts.count, leaseStartedAt: Date.now() };
  } finally {
    place.end(granted);
  }
}
