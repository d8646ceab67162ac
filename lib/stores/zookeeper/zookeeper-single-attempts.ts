import type { LockShape } from '../lock-shape.js';
import type { AcquireResult } from '../lock-store.interface.js';
import { queueWait } from '../queue/queue-order.js';
import { readContender, statOf } from './nodes/contenders.query.js';
import { contenderShape, encodeContenderValue, PLAIN_CONTENDER, type ContenderShape } from './zookeeper-key-layout.js';
import type { ZookeeperSession } from './zookeeper-session.js';
import type { ZookeeperStoreContext } from './zookeeper-store-context.js';

/**
 * Single attempts (`acquire`, `acquireShared`), for every shape the same way: the contender creates its
 * node at the back of the lock's queue, then reads its place (its czxid and the queue in one pipelined
 * read: two round trips with the create); it holds when the queue's rule admits it there
 * (queue/queue-order.ts), and otherwise deletes its node before it answers. Created at the back, an
 * attempt never overtakes a waiter. ZooKeeper cannot create a node on a condition about its siblings (a
 * multi's check compares one node's data version, never its children), so the node exists from the create
 * to the answer: meanwhile a waiter behind it watches it (its deletion wakes that one) and a
 * concurrent single attempt behind it that it keeps out may be turned away (Curator's `acquire(0, …)`
 * does the same). Deleted before the answer, it is gone when the caller, or anyone it tells, asks again.
 * Each grant is its own node; its czxid is the fencing token, from the zxid every grant of the key takes.
 */
export class ZookeeperSingleAttempts {
  constructor(private readonly context: ZookeeperStoreContext) {}

  plain(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    return this.unlessHeld(key, PLAIN_CONTENDER, token, leaseMs, holder);
  }

  shaped(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    return this.unlessHeld(key, contenderShape(shape), token, leaseMs, holder);
  }

  /** The grant the token holds already, or a new attempt: a node of its own behind its held one would keep it out. */
  private async unlessHeld(key: string, shape: ContenderShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    return (await this.heldAlready(key, token)) ?? this.attempt(key, shape, token, leaseMs, holder);
  }

  private async attempt(key: string, shape: ContenderShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const { context } = this;
    const { ticket, position, lookedAt } = await context.join(key, leaseMs, holder, shape);
    if (position.present && queueWait(position.earlier, shape.shape, shape.permits).kind === 'granted') {
      // A permit contender that joined behind this node before it was admitted waits for its grant: tell it.
      if (shape.shape === 'permits' && position.successor === 'permits') context.mark(key, ticket, encodeContenderValue({ holder, leaseMs }));
      context.grant(token, key, holder, leaseMs, ticket, lookedAt);
      return { acquired: true, fencingToken: ticket.czxid };
    }
    const front = position.present ? position.earlier[0]?.key : undefined;
    const [, ttlMs] = await Promise.all([context.leaveNow(key, ticket), front === undefined ? -1 : holderTtl(ticket.session, key, front)]);
    return { acquired: false, ttlMs };
  }

  /**
   * A re-sent acquisition of a token that holds the key (its answer was lost on the way back, say) is
   * granted again under the same fencing token, if its node is still the one created then.
   */
  private async heldAlready(key: string, token: string): Promise<AcquireResult | undefined> {
    const grant = this.context.grants.get(key, token);
    if (!grant) return undefined;
    if ((await statOf(grant.session, 'acquire', key, grant.path))?.czxid === grant.fencingToken) return { acquired: true, fencingToken: grant.fencingToken };
    this.context.grants.forget(token, grant);
    return undefined;
  }
}

/** The front contender's requested length stands in for its remaining TTL (ZooKeeper keeps none per node). */
async function holderTtl(session: ZookeeperSession, key: string, path: string): Promise<number> {
  const node = await readContender(session, 'acquire', key, path).catch(() => null);
  return node && Number.isFinite(node.value.leaseMs) && node.value.leaseMs > 0 ? node.value.leaseMs : -1;
}
