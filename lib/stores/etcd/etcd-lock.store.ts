import type { Etcd3 } from 'etcd3';
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
import { watchDeletions, type DeletionWatch } from './etcd-deletion-watch.js';
import type { ShortLeasePolicy } from './etcd-lease-length.js';
import { leasesOf } from './etcd-grants.js';
import { keepForMinimumHold, reletGrant, settleMove, unsettledOutcome } from './etcd-lease-moves.js';
import { EtcdCallsInFlight } from './etcd-calls-in-flight.js';
import { EtcdLockInspection } from './etcd-lock-inspection.js';
import { acquireInQueue } from './etcd-lock-queue.js';
import { etcdQueueBackend } from './etcd-queue.backend.js';
import { EtcdRenewal } from './etcd-renewal.js';
import { EtcdSingleAttempts } from './etcd-single-attempts.js';
import { EtcdStoreContext } from './etcd-store-context.js';
import { leaseTtl } from './txns/leases.rpc.js';
import { releaseTxn } from './txns/release.txn.js';
import { assertOwnershipToken } from '../ownership-token.js';
import { lockShapeName } from '../lock-shape.js';

export interface EtcdLockStoreOptions {
  readonly keyPrefix: string;
  /** How long one etcd request may take before its outcome counts as unknown. */
  readonly commandTimeoutMs: number;
  /** `host:port` list for error messages (`describeEndpoints`). */
  readonly endpoints: string;
  /** False when the user handed the client in: closing it is then theirs to do. */
  readonly ownsClient: boolean;
  /** @default 'reject' */
  readonly shortLeases?: ShortLeasePolicy;
}

/**
 * The lease protocol on etcd, after its `concurrency.Mutex` and `recipes.RWMutex`: every acquisition puts
 * its own key under the lock's prefix, attached to its own etcd lease; the keys queue by create revision,
 * the front of the queue holds (one plain holder or writer, readers together, up to N permit holders: see
 * queue/queue-order.ts), and a holder's create revision is its fencing token (strictly increasing,
 * linearizable, kept through member failures). Waiters queue in etcd itself and each watches only what it
 * waits for (a plain waiter its predecessor). Renewals are explicit keep-alives
 * the library's watchdog sends, never etcd3's background keep-alive (which reports a loss only after two
 * TTLs): the library's local deadline always comes first. The transactions live in `txns/`.
 */
export class EtcdLockStore implements LockStore {
  private readonly context: EtcdStoreContext;
  private readonly inspection: EtcdLockInspection;
  private readonly renewal: EtcdRenewal;
  private readonly attempts: EtcdSingleAttempts;
  private readonly calls: EtcdCallsInFlight;
  private readonly holds = new Set<NodeJS.Timeout>();
  private readonly listeners = new Set<DeletionWatch>();

  constructor(
    client: Etcd3,
    private readonly options: EtcdLockStoreOptions,
  ) {
    this.context = new EtcdStoreContext(client, { ...options, shortLeases: options.shortLeases ?? 'reject' });
    this.inspection = new EtcdLockInspection(this.context.rpc, this.context.commands, this.context.layout);
    this.attempts = new EtcdSingleAttempts(this.context);
    this.calls = new EtcdCallsInFlight(this.context);
    this.renewal = new EtcdRenewal(this.context.rpc, this.context.commands, this.context.grants, {
      relet: (grant, leaseMs, sentAt) => reletGrant(this.context, grant, leaseMs, sentAt),
      settle: (grant) => settleMove(this.context, grant, 'renew'),
      unsettled: (grant, error) => unsettledOutcome(this.context, grant, error),
      forget: (token, grant) => this.context.forget(token, grant),
    });
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    return this.calls.attempt(key, token, () => this.attempts.plain(key, token, leaseMs, holder));
  }

  acquireQueued(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome> {
    return this.queued(request, (signal) => acquireInQueue({ ...request, signal }, 'plain', 0, etcdQueueBackend(this.context, 'plain')));
  }

  /**
   * Read/write locks and semaphores, one attempt (see EtcdSingleAttempts): the shaped key is put only
   * where the lock's queue admits it at once; a plain lock and every shape share that one queue, so they
   * exclude each other as its rule says (queue/queue-order.ts).
   */
  async acquireShared(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    return this.calls.attempt(key, token, () => this.attempts.shaped(key, shape, token, leaseMs, holder));
  }

  /** A waiting read/write lock or semaphore, in the same queue as plain waiters (see acquireInQueue). */
  acquireSharedQueued(request: QueuedAcquireRequest, shape: LockShape): Promise<QueuedAcquireOutcome> {
    const name = lockShapeName(shape);
    return this.queued(request, (signal) => acquireInQueue({ ...request, signal }, name, shape.permits ?? 0, etcdQueueBackend(this.context, name, shape.permits)));
  }

  /** Every shape waits in the lock's queue: FIFO across instances, each waiter woken by what it waits for. */
  queuesShape(): boolean {
    return true;
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const { rpc, commands, grants } = this.context;
    const grant = grants.get(key, token);
    if (!grant) return false;
    if (keepMs > 0) return keepForMinimumHold(this.context, token, grant, keepMs, (endHold) => this.afterHold(keepMs, endHold));
    try {
      if (await commands.run('release', key, (options) => releaseTxn(rpc, options, grant.waiterKey, grant.fencingToken))) return true;
      // etcd3 retries a request whose connection broke on another member: "not ours" may then be our own
      // delete seen twice. Only a release deletes a key while the lease it is attached to lives (expiry and
      // force-release go through the lease). The key was on the grant's lease, or on the one an unanswered
      // move may have put it on: if every one of them is alive, it was ours until we deleted it.
      const ttls = await Promise.all(leasesOf(grant).map(({ id }) => commands.run('release', key, (options) => leaseTtl(rpc, options, id))));
      return ttls.every((ttl) => ttl > 0);
    } finally {
      // Whatever happened, the grant is over. Revoking its lease deletes the key too if it is still there
      // (a release without an answer), and is token-checked by nature: the lease is this grant's alone.
      this.context.forget(token, grant);
    }
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return this.renewal.renew(requests);
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    const watch = watchDeletions(this.context.client, this.context.layout.lockRange(key), listener, this.context.tasks);
    this.listeners.add(watch);
    const stop = (): void => {
      this.listeners.delete(watch);
      watch.cancel();
    };
    try {
      await this.context.commands.run('subscribe', key, () => watch.connected);
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
   * Whether the server keeps leases of `leaseMs` (see `EtcdLeaseLength`): grants one and gives it back.
   * Rejects with `LockConfigError` when it would stretch them, with `LockStoreUnavailableError` when it
   * does not answer. The module asks at startup, for its own `leaseMs`.
   */
  async checkLeaseLength(leaseMs: number): Promise<void> {
    this.context.revokeLater(await this.context.grantLease('check', '*', leaseMs));
  }

  async ping(): Promise<void> {
    const { rpc, commands, layout } = this.context;
    // A linearizable read: answered only by a member that can reach a quorum.
    await commands.run('ping', '*', (options) => rpc.kv.range({ ...layout.prefixRange(), count_only: true }, options));
  }

  /**
   * Ends every wait and lets single attempts in flight finish (a grant they receive now is given back),
   * stops release listeners and minimum-hold timers (a held key then stays until its etcd lease runs out:
   * at least the hold, as promised), lets background revokes finish for up to one command timeout, and
   * closes the client if the store opened it.
   */
  async close(): Promise<void> {
    // Aborted waits end within a turn or a request; their clean-up (revoking their lease) is queued then.
    await this.calls.close();
    for (const timer of this.holds) clearTimeout(timer);
    this.holds.clear();
    for (const watch of [...this.listeners]) watch.cancel();
    this.listeners.clear();
    await this.context.tasks.settle(this.options.commandTimeoutMs);
    if (this.options.ownsClient) this.context.client.close();
  }

  /** Runs one queued wait (see EtcdCallsInFlight.wait), after checking its ownership token. */
  private queued(request: QueuedAcquireRequest, wait: (signal: AbortSignal) => Promise<QueuedAcquireOutcome>): Promise<QueuedAcquireOutcome> {
    try {
      assertOwnershipToken(request.token);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.calls.wait(request, wait);
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
