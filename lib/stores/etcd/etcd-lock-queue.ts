import type { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import { waitInStoreQueue, type QueueAttempts, type QueueLook, type QueuePlace } from '../queue/store-queue-wait.js';
import type { DeletionWatch } from './etcd-deletion-watch.js';
import { queueWait, type QueueShape } from '../queue/queue-order.js';
import type { QueueEntry, QueueWait } from './etcd-queue-order.js';

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

/**
 * What a waiter found at its place: what it reads of the keys before it (the last one it cannot share the
 * lock with, or a permit waiter's run of permit keys, see `queueWait`), and for a permit waiter the shape
 * of the key right behind it.
 */
export type QueuePosition = { readonly present: false } | { readonly present: true; readonly earlier: QueueEntry[]; readonly successor?: QueueShape };

/** The etcd side of a wait for one shape, as the store provides it: every call one round trip, failures as `LockStoreUnavailableError`. */
export interface QueueBackend {
  /** Grants the waiter's own etcd lease. */
  lease(request: QueuedAcquireRequest): Promise<QueueTicket>;
  /**
   * Puts the waiter's key (idempotent) and reads what is before it, at one revision; `earlier` is
   * absent when the key was there already (a retry whose first put landed unseen): its place is read then.
   * `'lease-gone'` when etcd no longer has the ticket's lease (it ran out before the put landed).
   */
  enqueue(request: QueuedAcquireRequest, ticket: QueueTicket): Promise<{ createRevision: number; earlier?: QueueEntry[] } | 'lease-gone'>;
  position(request: QueuedAcquireRequest, ticket: QueueTicket): Promise<QueuePosition>;
  /** True when the lease is still alive (and now refreshed). */
  keepAlive(request: QueuedAcquireRequest, ticket: QueueTicket): Promise<boolean>;
  /** Watches one key (for its deletion, and its puts with `puts`), or with `key` undefined every deletion in the lock. */
  watch(request: QueuedAcquireRequest, key: Buffer | undefined, puts: boolean, onEvent: (key: Buffer) => void): DeletionWatch;
  /** Puts the ticket's key again, unchanged (in the background): the permit waiter behind it wakes and looks. */
  mark(request: QueuedAcquireRequest, ticket: QueueTicket & { createRevision: number }): void;
  /** Gives the place up: revokes the lease, which deletes the key with it (in the background). */
  leave(ticket: QueueTicket): void;
  /** The ticket became a holder: from here on it is a grant of `token`. */
  granted(request: QueuedAcquireRequest, ticket: QueueTicket & { createRevision: number }): void;
}

/**
 * A fair wait in etcd, for a plain lock (after `concurrency.Mutex.Lock`), a read/write lock or a semaphore
 * (after `recipes.RWMutex`), all in the lock's one queue; the loop is `waitInStoreQueue`. The waiter puts
 * its key (shape `plain` has no letter) at the back, on its own lease kept alive every third of it, and
 * holds once the queue's rule admits it (queue/queue-order.ts); its key's create revision is the fencing
 * token. Between looks it watches what it waits for and nothing else, so a release wakes only waiters it
 * may admit: a plain waiter or a writer the key just before it, a reader the last key before it that is
 * not a reader, each for its deletion; a permit waiter behind a waiting permit key watches that key, which
 * puts itself again when granted (its mark); the first permit waiter behind N holders watches the lock's
 * deletions, acting only on those of the keys before it. A waiter gives up by revoking its lease (its key
 * goes with it, waking whoever watched it); a crashed one's key goes when its lease runs out. A ticket
 * whose key vanished meanwhile (its lease expired during an outage) joins again at the back.
 */
export function acquireInQueue(request: QueuedAcquireRequest, shape: QueueShape, permits: number, backend: QueueBackend): Promise<QueuedAcquireOutcome> {
  return waitInStoreQueue(request, new EtcdQueuePlace(request, shape, permits, backend));
}

class EtcdQueuePlace implements QueuePlace {
  private readonly keepAliveEveryMs: number;
  private ticket?: QueueTicket;
  private watch?: DeletionWatch;
  /** What the watch is on: a key (hex) and whether its puts count, or the lock's deletions. */
  private watching?: string;
  /** For a watch on the lock's deletions: the keys whose deletion may admit this waiter (hex). */
  private awaited = new Set<string>();

  constructor(
    private readonly request: QueuedAcquireRequest,
    private readonly shape: QueueShape,
    private readonly permits: number,
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
      if (joined === 'lease-gone') {
        // The lease ran out before the key was put (an outage longer than it): every put onto it is
        // refused. A new lease, and the key at the back.
        this.ticket = undefined;
        return 'again';
      }
      ticket.createRevision = joined.createRevision;
      // Nobody is behind a key just put. A retry whose first put landed unseen reads its place below, and
      // may find a waiter behind it.
      if (joined.earlier) return this.follow(queueWait(joined.earlier, this.shape, this.permits), wake, ticket, undefined);
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
    return this.follow(queueWait(position.earlier, this.shape, this.permits), wake, ticket, position.successor);
  }

  end(granted: boolean): void {
    this.unwatch();
    if (!granted && this.ticket) this.backend.leave(this.ticket);
  }

  private follow(wait: QueueWait, wake: Wake, ticket: QueueTicket, successor: QueueShape | undefined): QueueLook {
    if (wait.kind !== 'granted') {
      this.watchFor(wait, wake);
      return { lookBy: ticket.refreshedAt + this.keepAliveEveryMs };
    }
    const held = ticket as QueueTicket & { createRevision: number };
    // A permit key right behind this one waited for this grant ('change'); one put of the key tells it. A
    // permit key that joined after this one was admitted saw it held and waits for something else.
    if (this.shape === 'permits' && successor === 'permits') this.backend.mark(this.request, held);
    return {
      take: (attempts) => {
        this.backend.granted(this.request, held);
        return { result: { acquired: true, fencingToken: held.createRevision }, attempts, leaseStartedAt: held.refreshedAt };
      },
    };
  }

  /**
   * A new target gets a watch from "now" on, and the queue is read once more when etcd confirms it, which
   * catches an event that came first (as for plain waiters: a watch from the read's revision would wait
   * for etcd's 100 ms catch-up loop on a busy lock).
   */
  private watchFor(wait: Exclude<QueueWait, { kind: 'granted' }>, wake: Wake): void {
    const target = wait.kind === 'any-deletion' ? 'lock' : `${wait.kind}:${wait.key.toString('hex')}`;
    if (wait.kind === 'any-deletion') this.awaited = new Set(wait.keys.map((key) => key.toString('hex')));
    if (this.watching === target) return;
    this.unwatch();
    this.watching = target;
    this.watch =
      wait.kind === 'any-deletion'
        ? this.backend.watch(this.request, undefined, false, (key) => {
            if (this.awaited.has(key.toString('hex'))) wake.fire();
          })
        : this.backend.watch(this.request, wait.key, wait.kind === 'change', () => wake.fire());
    const watch = this.watch;
    void watch.connected.then(() => wake.fire());
    // A watch etcd cancelled delivers nothing more: the next look, at once, sets a new one.
    void watch.ended.then(() => {
      if (this.watch !== watch) return;
      this.watch = undefined;
      this.watching = undefined;
      wake.fire();
    });
  }

  private unwatch(): void {
    this.watch?.cancel();
    this.watch = undefined;
    this.watching = undefined;
  }
}
