import type { LockShape, QueuedAcquireOutcome, QueuedAcquireRequest } from '../../lock-store.interface.js';
import { ContendedKeys } from './contended-keys.js';
import type { FairQueueContext } from './fair-queue-context.js';
import { PLAIN_QUEUE, sharedQueue } from './queue-protocol.js';
import { QueueWait } from './redis-queue-wait.js';

/**
 * The fair wait on Redis (see scripts/queue.lua.ts for the data): a waiter that finds the key taken joins
 * the key's queue in the same call, and from then on is told, and only it, when the key is handed to it.
 * Like etcd's mutex and ZooKeeper's lock recipe, a release wakes exactly one waiter; unlike them the
 * hand-off is done by the releasing script itself, so the next holder owns the key before it even hears of
 * it: no second round trip, no race to lose. Like Redisson's fair lock, every waiter carries a deadline (its
 * heartbeat lease, renewed by a look at the queue every third of it), and a waiter past it is dropped
 * wherever it is met.
 */
export class RedisFairQueue {
  private waiters = 0;
  private readonly contended = new ContendedKeys();

  constructor(private readonly context: FairQueueContext) {}

  acquire(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome> {
    return new QueueWait(this.context, this.contended, PLAIN_QUEUE, request, ++this.waiters).run();
  }

  /**
   * The same wait for a grant in `shape`, in the key's queue of shaped waiters (see
   * scripts/shared-queue.lua.ts): a release of a hold hands it to the next live waiter(s) the grant rule
   * lets in, in the same step, and wakes only them.
   */
  acquireShared(request: QueuedAcquireRequest, shape: LockShape): Promise<QueuedAcquireOutcome> {
    return new QueueWait(this.context, this.contended, sharedQueue(shape), request, ++this.waiters).run();
  }

  /**
   * Whether this store instance last found `lockKey` queued for (a waiter of it joined behind others):
   * then a waiting acquisition joins at once, otherwise it first makes the plain attempt, which is turned
   * away while the key is held (with `fair`, also while anybody stands in line; see
   * `LockStore.queuesAtOnce`).
   */
  foundQueued(lockKey: string): boolean {
    return this.contended.has(lockKey);
  }
}
