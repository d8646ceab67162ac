import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import type { DeletionWatch } from './etcd-deletion-watch.js';
import type { PositionTxnResult } from './txns/position.txn.js';
import { Wake } from '../../support/wake.js';
import { retryDelayMs } from '../../support/retry-delay.js';

/** A waiter's place: its own etcd lease, and (once put) its key with its create revision. */
export interface QueueTicket {
  readonly leaseId: string;
  readonly ttlSeconds: number;
  readonly waiterKey: Buffer;
  /** Unknown until the enqueue transaction answered. */
  createRevision?: number;
  /** Local time the grant or the last keep-alive that got through was sent: the etcd lease ran from then. */
  refreshedAt: number;
}

/** The etcd side of waiting, as the store provides it: every call one round trip, failures as `LockStoreUnavailableError`. */
export interface QueueBackend {
  /** Grants the waiter's own etcd lease. */
  lease(request: QueuedAcquireRequest): Promise<QueueTicket>;
  /** Puts the waiter key (idempotent) and says whether it is first. */
  enqueue(request: QueuedAcquireRequest, ticket: QueueTicket): Promise<{ createRevision: number; owner: boolean }>;
  position(request: QueuedAcquireRequest, ticket: QueueTicket): Promise<PositionTxnResult>;
  /** True when the lease is still alive (and now refreshed). */
  keepAlive(request: QueuedAcquireRequest, ticket: QueueTicket): Promise<boolean>;
  /** Watches `key` for its deletion from the moment etcd confirms the watch on. */
  watchDeletion(key: Buffer, onDelete: () => void): DeletionWatch;
  /** Gives the place up: revokes the lease, which deletes the key with it (in the background). */
  leave(ticket: QueueTicket): void;
  /** The ticket became the holder: from here on it is a grant of `token`. */
  granted(request: QueuedAcquireRequest, ticket: QueueTicket & { createRevision: number }): void;
}

/** Longest pause between two looks at the queue when no deletion was seen (in case a watch missed one). */
const MAX_RECHECK_MS = 5_000;

/**
 * A fair wait in etcd, after `concurrency.Mutex.Lock`: the waiter puts its key (on its own lease) and
 * watches only the key just before it, so a release wakes exactly the next waiter; when nothing is left
 * before it, it holds the lock, and its key's create revision is the fencing token. While it waits it
 * keeps its lease alive itself (explicit keep-alives, every third of the lease) and looks at the queue
 * again now and then, in case a watch missed a deletion. It gives up at the deadline or on abort by
 * revoking its lease (which deletes its key); a crashed waiter's key goes when its lease runs out, so it
 * blocks the queue no longer than that. Store errors are retried with backoff until the deadline; a
 * ticket whose key vanished meanwhile (lease expired during an outage) joins again at the back.
 */
export async function acquireInQueue(request: QueuedAcquireRequest, backend: QueueBackend): Promise<QueuedAcquireOutcome> {
  const { deadline, signal } = request;
  const keepAliveEveryMs = Math.max(1, Math.floor(request.leaseMs / 3));
  const wake = new Wake();
  let ticket: QueueTicket | undefined;
  let watch: DeletionWatch | undefined;
  let watched: Buffer | undefined;
  let attempts = 0;
  let failures = 0;
  let quietRechecks = 0;
  let lastError: LockStoreUnavailableError | undefined;
  let granted = false;

  const grant = (held: QueueTicket & { createRevision: number }): QueuedAcquireOutcome => {
    signal?.throwIfAborted();
    granted = true;
    backend.granted(request, held);
    return { result: { acquired: true, fencingToken: held.createRevision }, attempts, leaseStartedAt: held.refreshedAt };
  };

  try {
    for (;;) {
      signal?.throwIfAborted();
      // The first pass always runs, however close the deadline: one full attempt, as a plain acquire makes.
      if (attempts > 0 && Date.now() >= deadline) break;
      try {
        if (!ticket) {
          attempts++;
          ticket = await backend.lease(request);
        }
        if (ticket.createRevision === undefined) {
          attempts++;
          const joined = await backend.enqueue(request, ticket);
          ticket.createRevision = joined.createRevision;
          if (joined.owner) return grant(ticket as QueueTicket & { createRevision: number });
        }
        if (Date.now() - ticket.refreshedAt >= keepAliveEveryMs && !(await backend.keepAlive(request, ticket))) {
          // The lease ran out (an outage longer than it): its key went with it. Join again, at the back.
          watch?.cancel();
          watched = undefined;
          ticket = undefined;
          continue;
        }
        attempts++;
        const position = await backend.position(request, ticket);
        if (!position.present) {
          watch?.cancel();
          watched = undefined;
          backend.leave(ticket);
          ticket = undefined;
          continue;
        }
        if (position.predecessor === undefined) return grant(ticket as QueueTicket & { createRevision: number });
        failures = 0;
        lastError = undefined;
        const seen = wake.count;
        // A new predecessor gets a watch from "now" on, and the queue is read once more when etcd confirms
        // it, which catches a deletion that came first. (A watch from the read's revision would do the same,
        // but etcd serves watches that start in the past from a catch-up loop that runs every 100 ms, and
        // on a busy lock the revision has always moved on: each hand-off would wait for that loop.)
        if (!watched?.equals(position.predecessor)) {
          watch?.cancel();
          watched = position.predecessor;
          watch = backend.watchDeletion(position.predecessor, () => wake.fire());
          void watch.connected.then(() => wake.fire());
        }
        const recheckMs = Math.min(MAX_RECHECK_MS, 500 * 2 ** quietRechecks) * (0.5 + Math.random() / 2);
        const until = Math.min(deadline, ticket.refreshedAt + keepAliveEveryMs, Date.now() + recheckMs);
        await wake.wait(until, signal);
        quietRechecks = wake.count === seen ? Math.min(quietRechecks + 1, 8) : 0;
      } catch (error) {
        if (!(error instanceof LockStoreUnavailableError)) throw error;
        lastError = error;
        failures++;
        await wake.wait(Math.min(deadline, Date.now() + retryDelayMs(failures)), signal);
      }
    }
    if (lastError) throw lastError;
    return { result: { acquired: false, ttlMs: -1 }, attempts, leaseStartedAt: Date.now() };
  } finally {
    watch?.cancel();
    if (!granted && ticket) backend.leave(ticket);
  }
}
