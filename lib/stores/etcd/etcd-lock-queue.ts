import type { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import { waitInStoreQueue, type QueueAttempts, type QueueLook, type QueuePlace } from '../queue/store-queue-wait.js';
import type { DeletionWatch } from './etcd-deletion-watch.js';
import type { PositionTxnResult } from './txns/position.txn.js';

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

/**
 * A fair wait in etcd, after `concurrency.Mutex.Lock` (the loop is `waitInStoreQueue`): the waiter puts its
 * key (on its own lease) and watches only the key just before it; when nothing is left before it, it holds
 * the lock, and its key's create revision is the fencing token. While it waits it keeps its lease alive
 * itself (explicit keep-alives, every third of the lease). It gives up by revoking its lease (which deletes
 * its key); a crashed waiter's key goes when its lease runs out, so it blocks the queue no longer than
 * that. A ticket whose key vanished meanwhile (lease expired during an outage) joins again at the back.
 */
export function acquireInQueue(request: QueuedAcquireRequest, backend: QueueBackend): Promise<QueuedAcquireOutcome> {
  return waitInStoreQueue(request, new EtcdQueuePlace(request, backend));
}

class EtcdQueuePlace implements QueuePlace {
  private readonly keepAliveEveryMs: number;
  private ticket?: QueueTicket;
  private watch?: DeletionWatch;
  private watched?: Buffer;

  constructor(
    private readonly request: QueuedAcquireRequest,
    private readonly backend: QueueBackend,
  ) {
    this.keepAliveEveryMs = Math.max(1, Math.floor(request.leaseMs / 3));
  }

  async look(wake: Wake, attempts: QueueAttempts): Promise<QueueLook> {
    const { request, backend } = this;
    if (!this.ticket) {
      attempts.count++;
      this.ticket = await backend.lease(request);
    }
    const ticket = this.ticket;
    if (ticket.createRevision === undefined) {
      attempts.count++;
      const joined = await backend.enqueue(request, ticket);
      ticket.createRevision = joined.createRevision;
      if (joined.owner) return this.first(ticket);
    }
    if (Date.now() - ticket.refreshedAt >= this.keepAliveEveryMs && !(await backend.keepAlive(request, ticket))) {
      // The lease ran out (an outage longer than it): its key went with it. Join again, at the back.
      this.unwatch();
      this.ticket = undefined;
      return 'again';
    }
    attempts.count++;
    const position = await backend.position(request, ticket);
    if (!position.present) {
      this.unwatch();
      backend.leave(ticket);
      this.ticket = undefined;
      return 'again';
    }
    if (position.predecessor === undefined) return this.first(ticket);
    // A new predecessor gets a watch from "now" on, and the queue is read once more when etcd confirms
    // it, which catches a deletion that came first. (A watch from the read's revision would do the same,
    // but etcd serves watches that start in the past from a catch-up loop that runs every 100 ms, and
    // on a busy lock the revision has always moved on: each hand-off would wait for that loop.)
    if (!this.watched?.equals(position.predecessor)) {
      this.watch?.cancel();
      this.watched = position.predecessor;
      this.watch = backend.watchDeletion(position.predecessor, () => wake.fire());
      void this.watch.connected.then(() => wake.fire());
    }
    return { lookBy: ticket.refreshedAt + this.keepAliveEveryMs };
  }

  end(granted: boolean): void {
    this.watch?.cancel();
    if (!granted && this.ticket) this.backend.leave(this.ticket);
  }

  private first(ticket: QueueTicket): QueueLook {
    const held = ticket as QueueTicket & { createRevision: number };
    return {
      take: (attempts) => {
        this.backend.granted(this.request, held);
        return { result: { acquired: true, fencingToken: held.createRevision }, attempts, leaseStartedAt: held.refreshedAt };
      },
    };
  }

  private unwatch(): void {
    this.watch?.cancel();
    this.watched = undefined;
  }
}
