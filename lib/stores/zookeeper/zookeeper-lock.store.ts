import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { followSignals } from '../../support/follow-signals.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockStore,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { assertOwnershipToken } from '../ownership-token.js';
import { setIfCreatedAt } from './nodes/checked-delete.node.js';
import { readContender } from './nodes/contenders.query.js';
import type { ZookeeperPackage } from './zookeeper.loader.js';
import { encodeContenderValue } from './zookeeper-key-layout.js';
import { isNodeReply, ZK } from './zookeeper-reply.js';
import { ZookeeperLockInspection } from './zookeeper-lock-inspection.js';
import { acquireInZookeeperQueue } from './zookeeper-lock-queue.js';
import { ZookeeperReleaseWatch } from './zookeeper-release-watch.js';
import { renewZookeeperGrants } from './zookeeper-renewal.js';
import { ZookeeperStoreContext, type ZookeeperStoreSettings } from './zookeeper-store-context.js';

export type ZookeeperLockStoreOptions = ZookeeperStoreSettings;

/**
 * The lease protocol on ZooKeeper, after Curator's InterProcessMutex: every acquisition creates its own
 * ephemeral sequential node under the lock's parent; the lowest sequence holds, and its czxid (the zxid
 * of the write that created it, which rises with every write of the ensemble) is the fencing token.
 * The session is the lease: a lease of `leaseMs` lives on a session whose timeout is `leaseMs`, and the
 * holder counts its own deadline from the last request the server answered on it, so it gives the lease
 * up before the ensemble could expire the session and hand the node's place on. Waiters watch only their
 * predecessor. The node operations live in `nodes/`; the wait loop in `zookeeper-lock-queue.ts`.
 */
export class ZookeeperLockStore implements LockStore {
  private readonly context: ZookeeperStoreContext;
  private readonly inspection: ZookeeperLockInspection;
  private readonly holds = new Set<NodeJS.Timeout>();
  private readonly watches = new Set<ZookeeperReleaseWatch>();
  private readonly closing = new AbortController();
  private readonly waiting = new Set<Promise<unknown>>();

  constructor(zookeeper: ZookeeperPackage, options: ZookeeperLockStoreOptions) {
    this.context = new ZookeeperStoreContext(zookeeper, options);
    this.inspection = new ZookeeperLockInspection(this.context);
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    const { ticket, position, lookedAt } = await this.context.join(key, leaseMs, holder);
    if (position.present && position.predecessor === undefined) {
      this.context.grant(token, key, holder, leaseMs, ticket, lookedAt);
      return { acquired: true, fencingToken: ticket.czxid };
    }
    this.context.leave(key, ticket);
    if (!position.present) return { acquired: false, ttlMs: -1 };
    const holderNode = await this.inspection.inspect(key).catch(() => null);
    return { acquired: false, ttlMs: holderNode && holderNode.ttlMs > 0 ? holderNode.ttlMs : -1 };
  }

  acquireQueued(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome> {
    try {
      assertOwnershipToken(request.token);
    } catch (error) {
      return Promise.reject(error);
    }
    // Closing the store ends every wait at once (with a store error), so shutdown never waits for waitMs.
    const followed = request.signal ? followSignals(request.signal, this.closing.signal) : undefined;
    const { key, token, leaseMs, holder } = request;
    const outcome = acquireInZookeeperQueue(
      { ...request, signal: followed?.signal ?? this.closing.signal },
      {
        join: () => this.context.join(key, leaseMs, holder),
        position: (_request, ticket) => this.context.position(key, ticket),
        watch: async (_request, ticket, predecessor, onChange) => {
          const node = await ticket.session.call('acquire', key, (client) => client.getData(predecessor, onChange)).catch((error: unknown) => {
            if (error instanceof LockStoreUnavailableError) throw error;
            return null;
          });
          return node !== null;
        },
        leave: (ticket) => this.context.leave(key, ticket),
        granted: (_request, ticket, startedAt) => void this.context.grant(token, key, holder, leaseMs, ticket, startedAt),
      },
    );
    const settled = outcome.catch(() => undefined).finally(() => followed?.stop());
    this.waiting.add(settled);
    void settled.finally(() => this.waiting.delete(settled));
    return outcome;
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const { grants } = this.context;
    const grant = grants.get(key, token);
    if (!grant) return false;
    grants.forget(token, grant);
    const { session, path, fencingToken } = grant;
    if (keepMs > 0) {
      // The node stays (a value change wakes nobody) and is deleted when the hold ends; it lasts at most
      // as long as its session, which ends with this process (see docs/zookeeper.md).
      const kept = await setIfCreatedAt(session, 'release', key, path, fencingToken, encodeContenderValue({ holder: grant.holder, leaseMs: keepMs }));
      if (kept) this.afterHold(keepMs, () => this.context.leave(key, { session, path }));
      return kept;
    }
    try {
      // One round trip: the node's name carries this grant's random nonce, so no other grant's node can
      // ever be at this path (not even after a re-created parent restarted the sequence).
      await session.call('release', key, (client) => client.remove(path, -1));
      this.context.emptyParents.add(key);
      return true;
    } catch (error) {
      if (isNodeReply(error, ZK.NONODE)) return false;
      // Unknown: the node may still be there. Delete it in the background while its session could keep it.
      this.context.leave(key, { session, path });
      throw error;
    }
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return renewZookeeperGrants(this.context, requests);
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    const watch = new ZookeeperReleaseWatch(this.context, key, listener);
    this.watches.add(watch);
    const stop = (): void => {
      this.watches.delete(watch);
      watch.stop();
    };
    try {
      await watch.start();
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  inspect(key: string): Promise<HeldLock | null> {
    return this.inspection.inspect(key);
  }

  list(match = '*'): Promise<HeldLock[]> {
    return this.inspection.list(match);
  }

  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    return this.inspection.forceRelease(key, fencingToken);
  }

  /**
   * Whether the server grants sessions of `leaseMs` (its min/max session timeout): opens the session
   * leases of that length live on. Rejects with `LockConfigError` when it would not, with
   * `LockStoreUnavailableError` when it does not answer. The module asks at startup, for its own `leaseMs`.
   */
  async checkLeaseLength(leaseMs: number): Promise<void> {
    await this.context.sessions.sessionFor(leaseMs);
  }

  async ping(): Promise<void> {
    const session = await this.context.reader();
    await readContender(session, 'ping', '*', '/');
  }

  /**
   * Ends every wait, stops release watches and minimum-hold timers, lets background deletes finish for up
   * to one command timeout, and closes every session (the ensemble deletes their nodes at once).
   */
  async close(): Promise<void> {
    this.closing.abort(new LockStoreUnavailableError('acquire', '*', { cause: new Error('the ZooKeeper store was closed') }));
    await Promise.all([...this.waiting]);
    for (const timer of this.holds) clearTimeout(timer);
    this.holds.clear();
    for (const watch of [...this.watches]) watch.stop();
    this.watches.clear();
    this.context.emptyParents.flush();
    await this.context.tasks.settle(this.context.settings.commandTimeoutMs);
    this.context.grants.clear();
    await this.context.sessions.close();
  }

  private afterHold(keepMs: number, endHold: () => void): void {
    const timer = setTimeout(() => {
      this.holds.delete(timer);
      endHold();
    }, keepMs);
    timer.unref();
    this.holds.add(timer);
  }
}
