import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockShape,
  LockStore,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { assertOwnershipToken } from '../ownership-token.js';
import { setIfCreatedAt } from './nodes/checked-write.node.js';
import { removeContender } from './nodes/contender.node.js';
import { readContender } from './nodes/contenders.query.js';
import type { ZookeeperPackage } from './zookeeper.loader.js';
import { contenderShape, encodeContenderValue, PLAIN_CONTENDER, type ContenderShape } from './zookeeper-key-layout.js';
import { ZookeeperLockInspection } from './zookeeper-lock-inspection.js';
import { acquireInZookeeperQueue } from './zookeeper-lock-queue.js';
import { zookeeperQueueBackend } from './zookeeper-queue.backend.js';
import { ZookeeperReleaseWatch } from './zookeeper-release-watch.js';
import { renewZookeeperGrants } from './zookeeper-renewal.js';
import { ZookeeperSingleAttempts } from './zookeeper-single-attempts.js';
import { ZookeeperStoreContext, type ZookeeperStoreSettings } from './zookeeper-store-context.js';
import { StoreWaits } from '../queue/store-waits.js';

export type ZookeeperLockStoreOptions = ZookeeperStoreSettings;

/**
 * The lease protocol on ZooKeeper, after Curator's InterProcessMutex and InterProcessReadWriteLock: every
 * acquisition creates its own ephemeral sequential node under the lock's parent, its shape in its name;
 * the nodes queue by sequence and the front of the queue holds (one plain holder or writer, readers
 * together, up to N permit holders: see queue/queue-order.ts). A holder's czxid (the zxid of the write
 * that created it, which rises with every write of the ensemble) is its fencing token. The session is the
 * lease: a lease of `leaseMs` lives on a session whose timeout is `leaseMs`, and the holder counts its own
 * deadline from the last request the server answered on it, so it gives the lease up before the ensemble
 * could expire the session and hand the node's place on. Waiters watch only what they wait for (a plain
 * waiter its predecessor). The node operations live in `nodes/`; the wait loop in `zookeeper-lock-queue.ts`.
 */
export class ZookeeperLockStore implements LockStore {
  private readonly context: ZookeeperStoreContext;
  private readonly inspection: ZookeeperLockInspection;
  private readonly attempts: ZookeeperSingleAttempts;
  private readonly holds = new Set<NodeJS.Timeout>();
  private readonly watches = new Set<ZookeeperReleaseWatch>();
  private readonly waits = new StoreWaits('ZooKeeper');

  constructor(zookeeper: ZookeeperPackage, options: ZookeeperLockStoreOptions) {
    this.context = new ZookeeperStoreContext(zookeeper, options);
    this.inspection = new ZookeeperLockInspection(this.context);
    this.attempts = new ZookeeperSingleAttempts(this.context);
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    return this.attempts.plain(key, token, leaseMs, holder);
  }

  acquireQueued(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome> {
    return this.queued(request, PLAIN_CONTENDER);
  }

  /**
   * Read/write locks and semaphores, one attempt (see ZookeeperSingleAttempts): a plain lock and every
   * shape share the lock's one queue, so they exclude each other as its rule says (queue/queue-order.ts).
   */
  async acquireShared(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    return this.attempts.shaped(key, shape, token, leaseMs, holder);
  }

  /** A waiting read/write lock or semaphore, in the same queue as plain waiters (see acquireInZookeeperQueue). */
  acquireSharedQueued(request: QueuedAcquireRequest, shape: LockShape): Promise<QueuedAcquireOutcome> {
    return this.queued(request, contenderShape(shape));
  }

  /** Every shape waits in the lock's queue: FIFO across instances, each waiter woken by what it waits for. */
  queuesShape(): boolean {
    return true;
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const { grants } = this.context;
    const grant = grants.get(key, token);
    if (!grant) return false;
    grants.forget(token, grant);
    const { session, path, fencingToken } = grant;
    if (keepMs > 0) {
      // The node stays (a value change grants nobody) and is deleted when the hold ends; it lasts at most
      // as long as its session, which ends with this process (see docs/zookeeper.md). A write without an
      // answer leaves the node there all the same, written or not: it goes when the hold would have ended.
      const endHold = (): void => this.afterHold(keepMs, () => this.context.leave(key, { session, path }));
      const kept = await setIfCreatedAt(session, 'release', key, path, fencingToken, encodeContenderValue({ holder: grant.holder, leaseMs: keepMs })).catch(
        (error: unknown) => {
          endHold();
          throw error;
        },
      );
      if (kept) endHold();
      return kept;
    }
    try {
      // One round trip: the node's name carries this grant's random nonce (see removeContender).
      const removed = await removeContender(session, 'release', key, path);
      if (removed) this.context.emptyParents.add(key);
      return removed;
    } catch (error) {
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
    await this.waits.close();
    for (const timer of this.holds) clearTimeout(timer);
    this.holds.clear();
    for (const watch of [...this.watches]) watch.stop();
    this.watches.clear();
    this.context.emptyParents.flush();
    await this.context.tasks.settle(this.context.settings.commandTimeoutMs);
    this.context.grants.clear();
    await this.context.sessions.close();
  }

  /** Runs one wait in the lock's queue, after checking its ownership token. */
  private queued(request: QueuedAcquireRequest, shape: ContenderShape): Promise<QueuedAcquireOutcome> {
    try {
      assertOwnershipToken(request.token);
    } catch (error) {
      return Promise.reject(error);
    }
    // Closing the store ends every wait at once (with a store error), so shutdown never waits for waitMs.
    return this.waits.run(request, (signal) =>
      acquireInZookeeperQueue({ ...request, signal }, shape, zookeeperQueueBackend(this.context, shape), this.context.settings.queueRechecks),
    );
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
