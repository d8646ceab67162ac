import type { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import { waitInStoreQueue, type QueueAttempts, type QueueLook, type QueuePlace } from '../queue/store-queue-wait.js';
import type { ZookeeperSession } from './zookeeper-session.js';

/** A contender's place: its node (on its session) and the node's czxid. */
export interface ContenderTicket {
  readonly session: ZookeeperSession;
  readonly path: string;
  readonly czxid: number;
}

/** Where a contender stands: gone (its session ended, or it was force-released), first, or behind `predecessor`. */
export type ContenderPosition = { readonly present: false } | { readonly present: true; readonly predecessor?: string };

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
   * Sets a one-shot watch on the predecessor (fired by its deletion or a change of its value); false when
   * it is already gone (no watch is left behind then).
   */
  watch(request: QueuedAcquireRequest, ticket: ContenderTicket, predecessor: string, onChange: () => void): Promise<boolean>;
  /** Gives the place up: deletes the node (in the background, retried while its session could keep it). */
  leave(ticket: ContenderTicket): void;
  /** The ticket became the holder: from here on it is a grant of `token`, its lease counted from `startedAt`. */
  granted(request: QueuedAcquireRequest, ticket: ContenderTicket, startedAt: number): void;
}

/**
 * A fair wait in ZooKeeper, after Curator's InterProcessMutex (the loop is `waitInStoreQueue`): the
 * contender creates its ephemeral sequential node and watches only the node just before it; when nothing
 * is left before it, it holds the lock, and its node's czxid is the fencing token. It gives up by deleting
 * its node; a crashed contender's node goes with its session. A contender whose node vanished (its session
 * expired meanwhile) joins again at the back, on a fresh session.
 */
export function acquireInZookeeperQueue(request: QueuedAcquireRequest, backend: ZookeeperQueueBackend): Promise<QueuedAcquireOutcome> {
  return waitInStoreQueue(request, new ZookeeperQueuePlace(request, backend));
}

class ZookeeperQueuePlace implements QueuePlace {
  private ticket?: ContenderTicket;
  private watched?: string;
  /** Bumped for every watch set and at the end: a one-shot watch of an older generation is ignored. */
  private generation = 0;

  constructor(
    private readonly request: QueuedAcquireRequest,
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
      this.watched = undefined;
    } else {
      sentAt = Date.now();
      attempts.count++;
      position = await backend.position(request, this.ticket);
    }
    const ticket = this.ticket;
    if (!position.present) {
      backend.leave(ticket);
      this.ticket = undefined;
      return 'again';
    }
    if (position.predecessor === undefined) {
      return {
        take: (count) => {
          backend.granted(request, ticket, sentAt);
          return { result: { acquired: true, fencingToken: ticket.czxid }, attempts: count, leaseStartedAt: sentAt };
        },
      };
    }
    if (this.watched !== position.predecessor) {
      const mine = ++this.generation;
      this.watched = position.predecessor;
      const fired = (): void => {
        if (mine !== this.generation) return;
        this.watched = undefined;
        wake.fire();
      };
      if (!(await backend.watch(request, ticket, position.predecessor, fired))) {
        this.watched = undefined;
        return 'again';
      }
    }
    return {};
  }

  end(granted: boolean): void {
    this.generation++;
    if (!granted && this.ticket) this.backend.leave(this.ticket);
  }
}
