import { LeaseLostError, type LeaseLostReason } from '../errors/lease-lost.error.js';
import { LeaseReleasedError } from '../errors/lease-released.error.js';
import { durationOption } from '../module/duration-option.js';
import type { LockEvents } from '../events/lock-events.js';
import { tokenDigest } from '../events/token-digest.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';
import { clockDriftMs } from '../watchdog/clock-drift.js';
import type { LeaseWatchdog } from '../watchdog/lease.watchdog.js';
import type { WatchedLease } from '../watchdog/watched-lease.interface.js';

/** The services a lease reports to; supplied by the LockService that granted it. */
export interface LeaseHost {
  readonly store: LockStore;
  readonly watchdog: LeaseWatchdog;
  readonly events: LockEvents;
  readonly transactions: TransactionSynchronizer;
  settled(lease: Lease): void;
}

/** @internal Everything the store's grant decided. */
export interface LeaseGrant {
  readonly key: string;
  readonly token: string;
  readonly fencingToken: number;
  readonly leaseMs: number;
  readonly renewIntervalMs: number;
  readonly minHoldMs: number;
  readonly autoRenew: boolean;
  /** When the granting call was sent: the store's TTL started no earlier. */
  readonly sentAt: number;
}

type LeaseState = 'held' | 'releasing' | 'released' | 'lost';

/**
 * A held lock. `fencingToken` goes with every write the lock protects; `signal` aborts with a
 * `LeaseLostError` the moment the library learns the lease is gone. `await using` releases it.
 */
export class Lease implements AsyncDisposable, WatchedLease {
  /** The lock key, without the module's prefix. */
  readonly key: string;
  /** Strictly greater than every earlier grant's token for this key: pass it to the resource you write. */
  readonly fencingToken: number;
  /** @internal */
  readonly token: string;
  /** @internal */
  readonly renewIntervalMs: number;
  /** @internal */
  readonly autoRenew: boolean;
  /** @internal */
  leaseMs: number;
  // Created on first use: most leases never hand their signal out, and AbortController is not free.
  private abortController?: AbortController;
  private digest?: string;
  /** @internal Set when the lease is lost; the reason its signal aborts with. */
  lostError?: LeaseLostError;
  private readonly grantedAt = Date.now();
  private readonly minHoldMs: number;
  private localExpiry: number;
  private state: LeaseState = 'held';
  private releasing?: Promise<void>;

  /** @internal Created by LockService only. */
  constructor(
    private readonly host: LeaseHost,
    grant: LeaseGrant,
  ) {
    this.key = grant.key;
    this.token = grant.token;
    this.fencingToken = grant.fencingToken;
    this.leaseMs = grant.leaseMs;
    this.renewIntervalMs = grant.renewIntervalMs;
    this.minHoldMs = grant.minHoldMs;
    this.autoRenew = grant.autoRenew;
    this.localExpiry = grant.sentAt + grant.leaseMs;
    host.watchdog.watch(this, grant.sentAt);
  }

  /** Aborted, with a `LeaseLostError` as reason, when the lease is lost. Not aborted by a normal release. */
  get signal(): AbortSignal {
    this.abortController ??= new AbortController();
    if (this.lostError && !this.abortController.signal.aborted) this.abortController.abort(this.lostError);
    return this.abortController.signal;
  }

  /** @internal Short digest of the token, for logs and events. */
  get tokenDigest(): string {
    this.digest ??= tokenDigest(this.token);
    return this.digest;
  }

  /** Local view of when the lease expires (epoch ms) unless renewed: the last renewal's send time + lease. */
  get expiresAt(): number {
    return this.localExpiry;
  }

  /** True until the lease is released or lost. */
  get held(): boolean {
    return this.state === 'held';
  }

  /**
   * Sets the lease to `ms` from now (default: its current length); later renewals keep that length.
   * Rejects with `LeaseLostError` if the key is no longer ours.
   */
  async extend(ms: number = this.leaseMs): Promise<void> {
    const leaseMs = durationOption('leaseMs', ms, 10);
    if (this.lostError) throw this.lostError;
    if (this.state !== 'held') throw new LeaseReleasedError(`Lease on "${this.key}" was already released; it cannot be extended.`);
    const sentAt = Date.now();
    const [renewed] = await this.host.store.renew([{ key: this.key, token: this.token, leaseMs }]);
    if (renewed instanceof Error) throw renewed;
    if (!renewed) this.onLost('rejected');
    // The watchdog may have given the lease up while the renewal was in flight.
    const state = this.state as LeaseState;
    if (state === 'lost') throw this.lostError;
    if (state !== 'held') return;
    this.leaseMs = leaseMs;
    this.localExpiry = sentAt + leaseMs;
    this.host.watchdog.watch(this, sentAt);
  }

  /**
   * Gives the key back (token-checked; with `minHoldMs` the key is kept until that much time has passed
   * since the grant). Idempotent. Rejects only when the store cannot be reached; a lease that turns out to
   * be gone already resolves, with `signal` aborted.
   */
  release(): Promise<void> {
    this.releasing ??= this.releaseOnce();
    return this.releasing;
  }

  /**
   * `await using` support: releases at the end of the block, or, inside a transaction, after it commits or
   * rolls back. A failure is reported through events instead of thrown, so it cannot mask the block's error.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.deferReleaseToTransaction()) return;
    await this.release().catch(() => undefined);
  }

  /**
   * @internal Inside a transaction, keeps the lease (renewed) until the transaction completes: writes made
   * under it become visible at commit, and only then may the next holder read them. A lease lost before
   * the commit makes the transaction roll back instead. Returns false when no transaction is active.
   */
  deferReleaseToTransaction(): boolean {
    const { transactions } = this.host;
    if (!transactions.isTransactionActive()) return false;
    this.confirmHeld();
    if (this.state !== 'held') return false;
    transactions.beforeCommit(() => {
      this.confirmHeld();
      if (this.lostError) throw this.lostError;
    });
    transactions.afterCompletion(() => this.release().catch(() => undefined));
    return true;
  }

  /** What a lease shows when logged or serialised: never the ownership token. */
  toJSON(): { key: string; fencingToken: number; expiresAt: number; held: boolean } {
    return { key: this.key, fencingToken: this.fencingToken, expiresAt: this.localExpiry, held: this.held };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Lease ${JSON.stringify(this.toJSON())}`;
  }

  /**
   * Declares the lease lost as soon as its local deadline has passed, without waiting for the
   * watchdog's timer: after the process was frozen (GC pause, SIGSTOP, a blocked event loop) timers fire
   * late, and a commit or a result must not slip through before they do.
   */
  private confirmHeld(): void {
    if (this.state === 'held' && Date.now() >= this.localExpiry - clockDriftMs(this.leaseMs)) this.onLost('expired');
  }

  /** @internal */
  onRenewed(sentAt: number): void {
    this.localExpiry = sentAt + this.leaseMs;
    this.host.events.emit('renewed', () => ({ ...this.describe(), expiresAt: this.localExpiry }));
  }

  /** @internal */
  onRenewFailed(error: unknown): void {
    this.host.events.emit('renew-failed', () => ({ ...this.describe(), error }));
  }

  /** @internal */
  onLost(reason: LeaseLostReason): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'lost';
    this.host.watchdog.unwatch(this);
    this.host.settled(this);
    this.host.events.emit('lost', () => ({ ...this.describe(), reason }));
    // A renewal that got through after we gave up would keep the key: hand it back (token-checked).
    if (reason === 'expired') this.host.store.release(this.key, this.token, 0).catch(() => undefined);
    this.lostError = new LeaseLostError(this.key, reason);
    this.abortController?.abort(this.lostError);
  }

  /**
   * @internal Shutdown, past its grace period: whoever still works under this lease is told it is gone
   * (signal aborted, a pending transaction rolls back), then the key is given back.
   */
  async abandon(): Promise<void> {
    if (this.state !== 'held') return;
    this.onLost('shutdown');
    await this.host.store.release(this.key, this.token, 0).catch(() => undefined);
  }

  private async releaseOnce(): Promise<void> {
    this.host.watchdog.unwatch(this);
    // A lease past its deadline is reported lost, not released as if nothing happened (its key, if still
    // ours, is handed back by onLost).
    this.confirmHeld();
    if (this.state !== 'held') return;
    this.state = 'releasing';
    const keptMs = Math.max(0, this.minHoldMs - (Date.now() - this.grantedAt));
    let released: boolean;
    try {
      released = await this.host.store.release(this.key, this.token, keptMs);
    } catch (error) {
      this.state = 'released';
      this.host.settled(this);
      this.host.events.emit('release-failed', () => ({ ...this.describe(), error }));
      throw error;
    }
    if (!released) return this.onLost('rejected');
    if (this.state !== 'releasing') return;
    this.state = 'released';
    this.host.settled(this);
    this.host.events.emit('released', () => ({ ...this.describe(), heldMs: Date.now() - this.grantedAt, keptMs }));
  }

  private describe(): { key: string; fencingToken: number; tokenDigest: string } {
    return { key: this.key, fencingToken: this.fencingToken, tokenDigest: this.tokenDigest };
  }
}
