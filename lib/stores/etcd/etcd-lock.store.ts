import type { Etcd3 } from 'etcd3';
import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
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
import { BackgroundTasks } from './background-tasks.js';
import { EtcdCommands } from './etcd-commands.js';
import { watchDeletions, type DeletionWatch } from './etcd-deletion-watch.js';
import { EtcdGrants, type EtcdGrant } from './etcd-grants.js';
import { decodeWaiterValue, encodeWaiterValue, EtcdKeyLayout } from './etcd-key-layout.js';
import { EtcdLeaseLength, type ShortLeasePolicy } from './etcd-lease-length.js';
import { EtcdLockInspection } from './etcd-lock-inspection.js';
import { acquireInQueue, type QueueBackend, type QueueTicket } from './etcd-lock-queue.js';
import { EtcdRenewal } from './etcd-renewal.js';
import { acquireTxn } from './txns/acquire.txn.js';
import { enqueueTxn } from './txns/enqueue.txn.js';
import type { EtcdRpc } from './txns/etcd-rpc.js';
import { grantLease, keepAliveOnce, leaseTtl, revokeLease } from './txns/leases.rpc.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';
import { positionTxn } from './txns/position.txn.js';
import { releaseTxn } from './txns/release.txn.js';

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
 * The lease protocol on etcd, after its `concurrency.Mutex`: every acquisition puts its own key under the
 * lock's prefix, attached to its own etcd lease; the key with the lowest create revision owns the lock and
 * that revision is the fencing token (strictly increasing, linearizable, kept through member failures).
 * Waiters queue in etcd itself and each watches only its predecessor. Renewals are explicit keep-alives
 * the library's watchdog sends, never etcd3's background keep-alive (which reports a loss only after two
 * TTLs): the library's local deadline always comes first. The transactions live in `txns/`.
 */
export class EtcdLockStore implements LockStore {
  private readonly rpc: EtcdRpc;
  private readonly commands: EtcdCommands;
  private readonly layout: EtcdKeyLayout;
  private readonly lengths: EtcdLeaseLength;
  private readonly grants = new EtcdGrants();
  private readonly tasks = new BackgroundTasks();
  private readonly inspection: EtcdLockInspection;
  private readonly renewal: EtcdRenewal;
  private readonly holds = new Set<NodeJS.Timeout>();
  private readonly listeners = new Set<DeletionWatch>();
  private readonly closing = new AbortController();
  private readonly waiting = new Set<Promise<unknown>>();

  constructor(
    private readonly client: Etcd3,
    private readonly options: EtcdLockStoreOptions,
  ) {
    this.rpc = { kv: client.kv, lease: client.leaseClient };
    this.commands = new EtcdCommands(options.endpoints, options.commandTimeoutMs);
    this.layout = new EtcdKeyLayout(options.keyPrefix);
    this.lengths = new EtcdLeaseLength(options.shortLeases ?? 'reject', options.endpoints);
    this.inspection = new EtcdLockInspection(this.rpc, this.commands, this.layout);
    this.renewal = new EtcdRenewal(this.rpc, this.commands, this.grants, {
      relet: (grant, leaseMs, sentAt) => this.relet(grant, leaseMs, sentAt),
      forget: (token, grant) => this.forget(token, grant),
    });
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const sentAt = Date.now();
    const lease = await this.grantLease('acquire', key, leaseMs);
    const waiterKey = this.layout.waiterKey(key, lease.id);
    // Without an answer the key may exist: revoking the lease deletes it, or keeps a late put from landing.
    const outcome = await this.commands.run(
      'acquire',
      key,
      (options) =>
        acquireTxn(this.rpc, options, {
          lock: this.layout.lockRange(key),
          waiterKey,
          leaseId: lease.id,
          value: encodeWaiterValue({ holder, leaseMs }),
        }),
      () => this.revokeLater(lease),
    );
    if (!outcome.granted) {
      this.revokeLater(lease);
      const { leaseMs: holderLeaseMs } = decodeWaiterValue(outcome.owner.value);
      return { acquired: false, ttlMs: Number.isFinite(holderLeaseMs) ? holderLeaseMs : -1 };
    }
    this.remember(token, { key, waiterKey, fencingToken: outcome.fencingToken, holder, leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: sentAt });
    return { acquired: true, fencingToken: outcome.fencingToken };
  }

  acquireQueued(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome> {
    // Closing the store ends every wait at once (with a store error), so shutdown never waits for waitMs.
    const signal = request.signal ? AbortSignal.any([request.signal, this.closing.signal]) : this.closing.signal;
    const outcome = acquireInQueue({ ...request, signal }, this.queueBackend());
    const settled = outcome.catch(() => undefined);
    this.waiting.add(settled);
    void settled.finally(() => this.waiting.delete(settled));
    return outcome;
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const grant = this.grants.get(key, token);
    if (!grant) return false;
    if (keepMs > 0) return this.keep(token, grant, keepMs);
    try {
      const released = await this.commands.run('release', key, (options) => releaseTxn(this.rpc, options, grant.waiterKey, grant.fencingToken));
      if (released) return true;
      // etcd3 retries a request whose connection broke on another member: "not ours" may then be our own
      // delete seen twice. Only a release deletes a key while its lease lives (expiry and force-release go
      // through the lease), so a live lease means the key was ours until we deleted it.
      return (await this.commands.run('release', key, (options) => leaseTtl(this.rpc, options, grant.leaseId))) > 0;
    } finally {
      // Whatever happened, the grant is over. Revoking its lease deletes the key too if it is still there
      // (a release without an answer), and is token-checked by nature: the lease is this grant's alone.
      this.forget(token, grant);
    }
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return this.renewal.renew(requests);
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    const watch = watchDeletions(this.client, this.layout.lockRange(key), listener, this.tasks);
    this.listeners.add(watch);
    const stop = (): void => {
      this.listeners.delete(watch);
      watch.cancel();
    };
    try {
      await this.commands.run('subscribe', key, () => watch.connected);
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

  async ping(): Promise<void> {
    // A linearizable read: answered only by a member that can reach a quorum.
    await this.commands.run('ping', '*', (options) => this.rpc.kv.range({ ...this.layout.prefixRange(), count_only: true }, options));
  }

  /**
   * Ends every wait, stops release listeners and minimum-hold timers (a held key then stays until its etcd
   * lease runs out: at least the hold, as promised), lets background revokes finish for up to one
   * command timeout, and closes the client if the store opened it.
   */
  async close(): Promise<void> {
    this.closing.abort(new LockStoreUnavailableError('acquire', '*', { cause: new Error('the etcd store was closed') }));
    // Aborted waits end within a turn or a request; their clean-up (revoking their lease) is queued then.
    await Promise.all([...this.waiting]);
    for (const timer of this.holds) clearTimeout(timer);
    this.holds.clear();
    for (const watch of [...this.listeners]) watch.cancel();
    this.listeners.clear();
    await this.tasks.settle(this.options.commandTimeoutMs);
    if (this.options.ownsClient) this.client.close();
  }

  /** Grants an etcd lease for `leaseMs` (rounded up to whole seconds); refuses one the server cannot make that short. */
  private async grantLease(operation: string, key: string, leaseMs: number): Promise<{ id: string; ttlSeconds: number }> {
    const ttl = this.lengths.ttlFor(leaseMs);
    // A grant without an answer leaves at most a lease with no key, which runs out by itself.
    const lease = await this.commands.run(operation, key, (options) => grantLease(this.rpc, options, ttl));
    try {
      this.lengths.granted(leaseMs, ttl, lease.ttlSeconds);
    } catch (error) {
      this.revokeLater(lease);
      throw error;
    }
    return lease;
  }

  /**
   * Minimum hold: the key moves to a fresh lease of (at least) `keepMs` and is deleted when the hold ends;
   * if this process dies first, that lease deletes it. Waiters are not woken by the move (a put), only by
   * the deletion.
   */
  private async keep(token: string, grant: EtcdGrant, keepMs: number): Promise<boolean> {
    const ttl = this.lengths.holdTtlFor(keepMs);
    const hold = await this.commands.run('release', grant.key, (options) => grantLease(this.rpc, options, ttl));
    const input = { waiterKey: grant.waiterKey, createRevision: grant.fencingToken, leaseId: hold.id, value: encodeWaiterValue({ holder: grant.holder, leaseMs: keepMs }) };
    let moved: boolean;
    try {
      moved = await this.commands.run('release', grant.key, (options) => moveToLeaseTxn(this.rpc, options, input));
    } catch (error) {
      this.revokeLater(hold);
      this.forget(token, grant);
      throw error;
    }
    this.forget(token, grant);
    if (!moved) {
      this.revokeLater(hold);
      return false;
    }
    const timer = setTimeout(() => {
      this.holds.delete(timer);
      this.revokeLater(hold);
    }, keepMs);
    timer.unref();
    this.holds.add(timer);
    return true;
  }

  /** A new lease length (`extend(ms)`): the key moves to a lease of that length, keeping its fencing token. */
  private async relet(grant: EtcdGrant, leaseMs: number, sentAt: number): Promise<boolean> {
    const lease = await this.grantLease('renew', grant.key, leaseMs);
    const input = { waiterKey: grant.waiterKey, createRevision: grant.fencingToken, leaseId: lease.id, value: encodeWaiterValue({ holder: grant.holder, leaseMs }) };
    const moved = await this.commands.run('renew', grant.key, (options) => moveToLeaseTxn(this.rpc, options, input), () =>
      this.revokeLater(lease),
    );
    if (!moved) {
      this.revokeLater(lease);
      return false;
    }
    this.revokeLater({ id: grant.leaseId, ttlSeconds: grant.ttlSeconds });
    Object.assign(grant, { leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: sentAt });
    return true;
  }

  private remember(token: string, grant: EtcdGrant): void {
    for (const swept of this.grants.add(token, grant)) this.revokeLater({ id: swept.leaseId, ttlSeconds: swept.ttlSeconds });
  }

  /** Drops a grant and revokes its lease (which takes its key along, if it is still attached). */
  private forget(token: string, grant: EtcdGrant): void {
    this.grants.delete(token);
    this.revokeLater({ id: grant.leaseId, ttlSeconds: grant.ttlSeconds });
  }

  /**
   * Revokes a lease (deleting its key, if still attached) without making the caller wait, retried through
   * an outage until the lease would have run out by itself anyway.
   */
  private revokeLater(lease: { readonly id: string; readonly ttlSeconds: number }): void {
    const until = Date.now() + lease.ttlSeconds * 1_000;
    this.tasks.retry(() => this.commands.run('revoke', lease.id, (options) => revokeLease(this.rpc, options, lease.id)), until);
  }

  private queueBackend(): QueueBackend {
    return {
      lease: async (request) => {
        const sentAt = Date.now();
        const lease = await this.grantLease('acquire', request.key, request.leaseMs);
        return { leaseId: lease.id, ttlSeconds: lease.ttlSeconds, waiterKey: this.layout.waiterKey(request.key, lease.id), refreshedAt: sentAt };
      },
      enqueue: (request, ticket) =>
        this.commands.run('acquire', request.key, (options) =>
          enqueueTxn(this.rpc, options, {
            lock: this.layout.lockRange(request.key),
            waiterKey: ticket.waiterKey,
            leaseId: ticket.leaseId,
            value: encodeWaiterValue({ holder: request.holder, leaseMs: request.leaseMs }),
          }),
        ),
      position: (request, ticket) =>
        this.commands.run('acquire', request.key, (options) =>
          positionTxn(this.rpc, options, { lock: this.layout.lockRange(request.key), waiterKey: ticket.waiterKey, createRevision: ticket.createRevision! }),
        ),
      keepAlive: async (request, ticket) => {
        const sentAt = Date.now();
        const ttls = await this.commands.run('acquire', request.key, (options) => keepAliveOnce(this.rpc, options, [ticket.leaseId]));
        if ((ttls.get(ticket.leaseId) ?? 0) <= 0) return false;
        ticket.refreshedAt = sentAt;
        return true;
      },
      watchDeletion: (key, onDelete) => watchDeletions(this.client, { key }, onDelete, this.tasks),
      leave: (ticket: QueueTicket) => this.revokeLater({ id: ticket.leaseId, ttlSeconds: ticket.ttlSeconds }),
      granted: (request, ticket) =>
        this.remember(request.token, {
          key: request.key,
          waiterKey: ticket.waiterKey,
          fencingToken: ticket.createRevision,
          holder: request.holder,
          leaseId: ticket.leaseId,
          ttlSeconds: ticket.ttlSeconds,
          leaseMs: request.leaseMs,
          refreshedAt: ticket.refreshedAt,
        }),
    };
  }
}
