import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { BackgroundTasks } from '../../support/background-tasks.js';
import type { QueueRechecks } from '../queue/store-queue-wait.js';
import { createContender, markContender, removeContender } from './nodes/contender.node.js';
import { DataWatchHub } from './nodes/data-watch.hub.js';
import { EmptyParents } from './nodes/empty-parents.js';
import { removeLockParentIfEmpty } from './nodes/lock-parent.node.js';
import { contendersOf, statOf } from './nodes/contenders.query.js';
import type { ZookeeperPackage } from './zookeeper.loader.js';
import { ZookeeperGrants, type ZookeeperGrant } from './zookeeper-grants.js';
import { contenderShapeOf, encodeContenderValue, newNonce, nonceOf, PLAIN_CONTENDER, queueEntriesOf, ZookeeperKeyLayout, type ContenderShape } from './zookeeper-key-layout.js';
import type { ContenderPosition, ContenderTicket, JoinedContender } from './zookeeper-lock-queue.js';
import { ZookeeperSessions, type ZookeeperSessionSettings } from './zookeeper-sessions.js';
import type { ZookeeperSession } from './zookeeper-session.js';

export interface ZookeeperStoreSettings extends ZookeeperSessionSettings {
  readonly keyPrefix: string;
  /**
   * When a waiter looks at the queue though no watch woke it (its safety net for a lost notification).
   * Tests make it minutes long, so that only a notification can explain a prompt grant.
   * @default QUEUE_RECHECKS (500 ms, doubling to 5 s)
   */
  readonly queueRechecks?: QueueRechecks;
}

/**
 * What the store's parts share: its sessions, its key layout, the grants it holds, and its background
 * clean-ups. The contender steps every acquisition takes (join, look at its place, leave) live here, so
 * that a plain acquire and a queued wait take the same ones.
 */
export class ZookeeperStoreContext {
  readonly layout: ZookeeperKeyLayout;
  readonly sessions: ZookeeperSessions;
  readonly grants: ZookeeperGrants;
  readonly tasks = new BackgroundTasks();
  /** Parents a release or give-up may have left empty; deleted a moment later (see `EmptyParents`). */
  readonly emptyParents = new EmptyParents((key) => this.tasks.run(async () => removeLockParentIfEmpty(await this.reader(), key, this.layout.lockPath(key))));
  /** Each session's data watches, shared by the waiters on it; they go with the session. */
  private readonly dataWatches = new WeakMap<ZookeeperSession, DataWatchHub>();

  constructor(
    zookeeper: ZookeeperPackage,
    readonly settings: ZookeeperStoreSettings,
  ) {
    this.layout = new ZookeeperKeyLayout(settings.keyPrefix);
    this.sessions = new ZookeeperSessions(zookeeper, settings);
    this.grants = new ZookeeperGrants((grant) => this.leave(grant.key, grant));
  }

  /**
   * Creates the contender's node (its shape in its name) on the session of its lease length, then reads
   * its czxid and its place in one pipelined round trip (`lookedAt`: when that look was sent). A create
   * without an answer may have landed: the nodes carrying this attempt's nonce are deleted in the
   * background (they would otherwise block the queue until the session ends).
   */
  async join(key: string, leaseMs: number, holder: string, shape: ContenderShape = PLAIN_CONTENDER): Promise<JoinedContender> {
    const session = await this.sessions.sessionFor(leaseMs).catch((error: unknown) => {
      // A session shared by every caller failed to open: name this caller's key, keep the reason.
      throw error instanceof LockStoreUnavailableError ? new LockStoreUnavailableError('acquire', key, { cause: error.cause }) : error;
    });
    const nonce = newNonce(shape);
    let path: string;
    try {
      path = await createContender(session, key, this.layout.contenderPrefix(key, nonce), encodeContenderValue({ holder, leaseMs }));
    } catch (error) {
      if (error instanceof LockStoreUnavailableError) this.sweepNonce(session, key, nonce);
      throw error;
    }
    const lookedAt = Date.now();
    try {
      const lockPath = this.layout.lockPath(key);
      const [stat, names] = await Promise.all([statOf(session, 'acquire', key, path), contendersOf(session, 'acquire', key, lockPath)]);
      if (!stat) throw new LockStoreUnavailableError('acquire', key, { cause: new Error('ZooKeeper: the new contender node vanished (its session ended)') });
      const ticket = { session, path, czxid: stat.czxid };
      return { ticket, position: placeIn(names, lockPath, path), lookedAt };
    } catch (error) {
      this.leave(key, { session, path });
      throw error;
    }
  }

  /** Where the contender stands: the contenders before it and the shape of the one behind it, or gone. */
  async position(key: string, ticket: ContenderTicket): Promise<ContenderPosition> {
    const lockPath = this.layout.lockPath(key);
    return placeIn(await contendersOf(ticket.session, 'acquire', key, lockPath), lockPath, ticket.path);
  }

  /**
   * Deletes a contender's node in the background, retried for as long as its session lives (the node
   * cannot outlive it): after an outage without a quorum the ensemble resumes the session, node and all,
   * and the delete then gets through. Its name carries the attempt's random nonce, so no other
   * contender's node is ever at that path. The lock's parent goes too once nothing is left under it.
   */
  leave(key: string, ticket: Pick<ContenderTicket, 'session' | 'path'>): void {
    const { session, path } = ticket;
    this.whileSessionLives(session, async () => {
      await removeContender(session, 'release', key, path);
      this.emptyParents.add(key);
    });
  }

  /**
   * Deletes a contender's node now, for an answer that must not find it in the queue any more (a denied
   * single attempt: the caller's next attempt would otherwise queue behind it). Without an answer, it is
   * left to `leave`, in the background.
   */
  async leaveNow(key: string, ticket: Pick<ContenderTicket, 'session' | 'path'>): Promise<void> {
    try {
      await removeContender(ticket.session, 'acquire', key, ticket.path);
      this.emptyParents.add(key);
    } catch {
      this.leave(key, ticket);
    }
  }

  /**
   * A granted permit contender's mark (`markContender`), in the background: the permit contender right
   * behind it waited for this grant. A mark whose outcome is unknown (a connection lost) is sent again
   * until it gets an answer or the session ends, instead of leaving that one to its next periodic look
   * (up to 5 s); one that landed unseen is refused the second time, its version moved.
   */
  mark(key: string, ticket: Pick<ContenderTicket, 'session' | 'path'>, value: string): void {
    this.whileSessionLives(ticket.session, () => markContender(ticket.session, key, ticket.path, value));
  }

  /**
   * The ticket holds: from here on it is a grant of `token`, and its node's czxid its fencing token. That
   * token is greater than every earlier grant's of the key, in any shape: a node is admitted only once
   * every node before it holds or is gone (queue/queue-order.ts), so a grant that comes after another one
   * ended has the later node, and a writer or plain holder (held alone) has a later node than every grant
   * before it. Within one parent the sequence order is the order of the creates, hence of their zxids, and
   * a parent is created again only after every node of the one before went. Grants that hold together
   * (readers, permits) differ, in queue order.
   */
  grant(token: string, key: string, holder: string, leaseMs: number, ticket: ContenderTicket, startedAt: number): ZookeeperGrant {
    const grant: ZookeeperGrant = {
      key,
      path: ticket.path,
      fencingToken: ticket.czxid,
      holder,
      session: ticket.session,
      leaseMs,
      expiresAt: startedAt + leaseMs,
    };
    this.grants.remember(token, grant);
    return grant;
  }

  /** The data watches of `session`, shared by every waiter on it (see `DataWatchHub`). */
  watchesOn(session: ZookeeperSession): DataWatchHub {
    let hub = this.dataWatches.get(session);
    if (!hub) this.dataWatches.set(session, (hub = new DataWatchHub(session)));
    return hub;
  }

  /** The session for reads no lease depends on. */
  reader(): Promise<ZookeeperSession> {
    return this.sessions.any();
  }

  private sweepNonce(session: ZookeeperSession, key: string, nonce: string): void {
    const lockPath = this.layout.lockPath(key);
    this.whileSessionLives(session, async () => {
      for (const name of await contendersOf(session, 'release', key, lockPath)) {
        if (nonceOf(name) === nonce) this.leave(key, { session, path: `${lockPath}/${name}` });
      }
    });
  }

  /** Runs a clean-up until it succeeds or the session ends (with the session, its nodes are gone anyway). */
  private whileSessionLives(session: ZookeeperSession, task: () => Promise<unknown>): void {
    this.tasks.retry(async () => {
      if (!session.ended) await task();
    }, Number.POSITIVE_INFINITY);
  }
}

function placeIn(names: readonly string[], lockPath: string, path: string): ContenderPosition {
  const mine = names.indexOf(path.slice(lockPath.length + 1));
  if (mine < 0) return { present: false };
  const behind = names[mine + 1];
  return { present: true, earlier: queueEntriesOf(lockPath, names.slice(0, mine)), successor: behind === undefined ? undefined : contenderShapeOf(behind).shape };
}
