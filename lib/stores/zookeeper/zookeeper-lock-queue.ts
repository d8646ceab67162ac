import type { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import { queueWait, type QueuedShape, type QueueShape, type QueueWait } from '../queue/queue-order.js';
import { waitInStoreQueue, type QueueAttempts, type QueueLook, type QueuePlace, type QueueRechecks } from '../queue/store-queue-wait.js';
import type { DataWatch } from './nodes/data-watch.hub.js';
import type { ContenderShape } from './zookeeper-key-layout.js';
import type { ZookeeperSession } from './zookeeper-session.js';

/** A contender's place: its node (on its session) and the node's czxid. */
export interface ContenderTicket {
  readonly session: ZookeeperSession;
  readonly path: string;
  readonly czxid: number;
}

/**
 * Where a contender stands: gone (its session ended, or it was force-released), or present with the
 * contenders before it (queue order, each named by its path) and the shape of the one right behind it.
 */
export type ContenderPosition =
  | { readonly present: false }
  | { readonly present: true; readonly earlier: ReadonlyArray<QueuedShape<string>>; readonly successor?: QueueShape };

/** A contender just created, with its place as read right after (`lookedAt`: when that read was sent). */
export interface JoinedContender {
  readonly ticket: ContenderTicket;
  readonly position: ContenderPosition;
  readonly lookedAt: number;
}

/** The ZooKeeper side of waiting, as the store provides it: store failures as `LockStoreUnavailableError`. */
export interface ZookeeperQueueBackend {
  /** Creates the contender's ephemeral sequential node on the session for its lease length, and reads its place. */
  join(request: QueuedAcquireRequest): Promise<JoinedContender>;
  position(request: QueuedAcquireRequest, ticket: ContenderTicket): Promise<ContenderPosition>;
  /**
   * Listens once for the next change of a contender before this one (its deletion or a later write of its
   * value), on the session's watch of that node: the node's stat as that watch was set, and the stop; null
   * when the node is already gone (nothing is left listening then).
   */
  watch(request: QueuedAcquireRequest, ticket: ContenderTicket, path: string, onChange: () => void): Promise<DataWatch | null>;
  /** Writes the ticket's node once, unchanged (in the background): the permit waiter right behind it wakes and looks. */
  mark(request: QueuedAcquireRequest, ticket: ContenderTicket): void;
  /** Gives the place up: deletes the node (in the background, retried while its session could keep it). */
  leave(request: QueuedAcquireRequest, ticket: ContenderTicket): void;
  /** The ticket became the holder: from here on it is a grant of `token`, its lease counted from `startedAt`. */
  granted(request: QueuedAcquireRequest, ticket: ContenderTicket, startedAt: number): void;
}

/**
 * A fair wait in ZooKeeper for a plain lock (Curator's InterProcessMutex), a read/write lock (ZooKeeper's
 * shared-lock recipe, Curator's InterProcessReadWriteLock) or a semaphore, all under the lock's one
 * parent; the loop is `waitInStoreQueue`. The contender creates its ephemeral sequential node (its shape in
 * its name) and holds once the queue's rule admits it (queue/queue-order.ts); its node's czxid is the
 * fencing token. Between looks it watches what it waits for and nothing else, so a release wakes only
 * contenders it may admit: a plain contender or a writer the node just before it, a reader the last node
 * before it that is not a reader; a permit contender behind a waiting permit node that node, which writes
 * itself once when granted (its mark); the first permit contender behind N holders each of them. It gives
 * up by deleting its node; a crashed contender's node goes with its session. A contender whose node
 * vanished (its session expired meanwhile) joins again at the back, on a fresh session.
 */
export function acquireInZookeeperQueue(
  request: QueuedAcquireRequest,
  shape: ContenderShape,
  backend: ZookeeperQueueBackend,
  rechecks?: QueueRechecks,
): Promise<QueuedAcquireOutcome> {
  return waitInStoreQueue(request, new ZookeeperQueuePlace(request, shape, backend), rechecks);
}

class ZookeeperQueuePlace implements QueuePlace {
  private ticket?: ContenderTicket;
  /** What the watches are for: one node's path, or 'holders' (the first permit waiter behind N of them). */
  private target?: string;
  /** The nodes of `target` listened to (or being), whose change has not come yet, each with its stop. */
  private readonly watching = new Map<string, Listening>();
  /** Bumped at every new target and at the end: a watch set for an older one is stopped when it arrives. */
  private generation = 0;

  constructor(
    private readonly request: QueuedAcquireRequest,
    private readonly shape: ContenderShape,
    private readonly backend: ZookeeperQueueBackend,
  ) {}

  async look(wake: Wake, attempts: QueueAttempts): Promise<QueueLook> {
    const { request, backend } = this;
    let position: ContenderPosition;
    let sentAt: number;
    if (!this.ticket || this.ticket.session.ended) {
      attempts.count++;
      const joined = await backend.join(request);
      this.ticket = joined.ticket;
      position = joined.position;
      sentAt = joined.lookedAt;
      this.retarget(undefined);
    } else {
      sentAt = Date.now();
      attempts.count++;
      position = await backend.position(request, this.ticket);
    }
    const ticket = this.ticket;
    if (!position.present) {
      backend.leave(request, ticket);
      this.ticket = undefined;
      return 'again';
    }
    const wait = queueWait(position.earlier, this.shape.shape, this.shape.permits);
    if (wait.kind === 'granted') {
      // A permit node right behind this one may wait for this grant ('change'): one write of the node tells it.
      if (this.shape.shape === 'permits' && position.successor === 'permits') backend.mark(request, ticket);
      return {
        take: (count) => {
          backend.granted(request, ticket, sentAt);
          return { result: { acquired: true, fencingToken: ticket.czxid }, attempts: count, leaseStartedAt: sentAt };
        },
      };
    }
    return (await this.watchFor(wait, wake, ticket)) ? {} : 'again';
  }

  end(granted: boolean): void {
    this.retarget(undefined);
    if (!granted && this.ticket) this.backend.leave(this.request, this.ticket);
  }

  /**
   * Sets the watches `wait` needs that are not set yet: one on the node it waits for (its deletion, or for
   * 'change' also its mark), or one on each holder before it. False when one of them is gone already, or
   * when the waiting permit node of a 'change' was written before its watch was set: a waiting node is
   * never written, so that was the mark of its grant, which the watch missed (look again at once).
   */
  private async watchFor(wait: Exclude<QueueWait<string>, { kind: 'granted' }>, wake: Wake, ticket: ContenderTicket): Promise<boolean> {
    const paths = wait.kind === 'any-deletion' ? wait.keys : [wait.key];
    this.retarget(wait.kind === 'any-deletion' ? 'holders' : wait.key);
    const mine = this.generation;
    const unset = paths.filter((path) => !this.watching.has(path));
    const set = await Promise.all(
      unset.map(async (path) => {
        const listening: Listening = { stop: () => undefined };
        this.watching.set(path, listening);
        const watch = await this.backend.watch(this.request, ticket, path, () => {
          if (this.watching.get(path) !== listening) return;
          this.watching.delete(path);
          wake.fire();
        });
        if (watch) listening.stop = watch.stop;
        if (mine !== this.generation) watch?.stop();
        return watch;
      }),
    ).catch((error: unknown) => {
      // Which watches were set is unknown: the next look sets them all again.
      this.retarget(undefined);
      throw error;
    });
    if (set.every((watch) => watch !== null && (wait.kind !== 'change' || watch.stat.version === 0))) return true;
    this.retarget(undefined);
    return false;
  }

  /** Stops listening to what the watches were for; a new target (or none) starts afresh. */
  private retarget(target: string | undefined): void {
    if (target !== undefined && target === this.target) return;
    this.generation++;
    this.target = target;
    for (const listening of this.watching.values()) listening.stop();
    this.watching.clear();
  }
}

/** A node this waiter listens to; `stop` once the watch is set. */
interface Listening {
  stop: () => void;
}
