import { LeaseLostError, type LeaseLostReason } from '../errors/lease-lost.error.js';
import { LeaseReleasedError } from '../errors/lease-released.error.js';
import { durationOption } from '../support/duration-option.js';
import type { LockLeaseEvent } from '../events/lock-event.types.js';
import { tokenDigest } from '../events/token-digest.js';
import { clockDriftMs } from './clock-drift.js';
import type { WatchedLease } from '../watchdog/watched-lease.interface.js';
import type { LeaseGrant, LeaseHost } from './lease-host.interface.js';
import { holdForTransaction } from '../transactions/lease-deferral.js';
import { ScopeCount } from './scope-count.js';

const ignore = (): void => undefined;

type LeaseState = 'held' | 'releasing' | 'released' | 'lost';

/**
 * A held lock. `fencingToken` goes with every write the lock protects; `signal` aborts with a
 * `LeaseLostError` the moment the library learns the lease is gone. `await using` releases it.
 *
 * Its owner is the scope that took it plus every re-entrant scope joined onto it: the key is given back
 * only once all of them have finished, however they were (or were not) awaited.
 */
export class Lease implements AsyncDisposable, WatchedLease {
  /** The lock key, without the module's prefix. */
  readonly key: string;
  /**
   * The low-cardinality name it was acquired under (`AcquireOptions.name`; for a locked method its key
   * template), which events and metrics report instead of the key.
   */
  readonly name: string | undefined;
  /** Strictly greater than every earlier grant's token for this key: pass it to the resource you write. */
  readonly fencingToken: number;
  /** @internal */
  readonly token: string;
  /** @internal */
  readonly autoRenew: boolean;
  /** @internal The lease length every renewal asks for; changed by `extend()`. */
  leaseMs: number;
  // Fields most leases never set are declared only (no slot defined per lease until one is set), and
  // AbortController and the scope count are created on first use: a lease taken and released by hand
  // costs neither.
  declare private abortController?: AbortController;
  declare private digest?: string;
  /** @internal Set when the lease is lost; the reason its signal aborts with. */
  declare lostError?: LeaseLostError;
  private readonly grantedAt = Date.now();
  private readonly minHoldMs: number;
  private localExpiry!: number;
  /** `localExpiry` less the clock-drift allowance of the TTL it counts; the watchdog reads it too. */
  private lossAt!: number;
  private state: LeaseState = 'held';
  declare private releasing?: Promise<void>;
  declare private extending?: Promise<void>;
  /** Scopes running under this lease: the taking scope and joined ones. */
  declare private scopes?: ScopeCount;
  /** @internal The watchdog's (see `WatchedLeases`). */
  declare watchSlot?: unknown;

  /** @internal Created by LockService only. */
  constructor(
    private readonly host: LeaseHost,
    grant: LeaseGrant,
  ) {
    this.key = grant.key;
    this.name = grant.name;
    this.token = grant.token;
    this.fencingToken = grant.fencingToken;
    this.leaseMs = grant.leaseMs;
    this.minHoldMs = grant.minHoldMs;
    this.autoRenew = grant.autoRenew;
    const ttlMs = grant.ttlMs ?? grant.leaseMs;
    this.expireAfter(grant.sentAt, ttlMs);
    host.watchdog.watch(this, grant.sentAt, ttlMs);
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

  /**
   * @internal How often the watchdog renews: the module's `renewIntervalMs` (default a third of the lease),
   * never more than half of the lease's current length, so an `extend()` to a shorter lease is renewed in time.
   */
  get renewIntervalMs(): number {
    return Math.max(1, Math.floor(Math.min(this.host.renewIntervalMs ?? this.leaseMs / 3, this.leaseMs / 2)));
  }

  /** Local view of when the lease expires (epoch ms) unless renewed: the last renewal's send time + lease. */
  get expiresAt(): number {
    return this.localExpiry;
  }

  /**
   * @internal When the lease counts as lost unless renewed (epoch ms): `expiresAt` less the allowance for
   * the store's clock running faster, taken of the TTL it counts (a queue hand-off's short one included).
   * The one deadline both the watchdog and the checks before a commit go by.
   */
  get deadline(): number {
    return this.lossAt;
  }

  /** True until the lease is released or lost. */
  get held(): boolean {
    return this.state === 'held';
  }

  /**
   * Sets the lease to `ms` from now (default: its current length); later renewals keep that length.
   * Rejects with `LeaseLostError` if the key is no longer ours, `LeaseReleasedError` once it was released.
   * Concurrent calls run one after another, the last one's length winning.
   */
  extend(ms: number = this.leaseMs): Promise<void> {
    const leaseMs = durationOption('leaseMs', ms, 10);
    const run = (this.extending ?? Promise.resolve()).then(() => this.extendOnce(leaseMs));
    this.extending = run.catch(ignore);
    return run;
  }

  private async extendOnce(leaseMs: number): Promise<void> {
    this.assertExtendable();
    // No renewal may be in flight or start while the extension is: whichever reached the store last would
    // decide the TTL, and the local deadline could not know which one that was.
    await this.host.watchdog.hold(this);
    let resumed = false;
    try {
      this.assertExtendable();
      const sentAt = Date.now();
      const [renewed] = await this.host.store.renew([{ key: this.key, token: this.token, leaseMs }]);
      if (renewed instanceof Error) throw renewed;
      if (!renewed) this.onLost('rejected');
      // The deadline may have passed, or the lease been given up, while the renewal was in flight.
      this.assertExtendable();
      this.leaseMs = leaseMs;
      this.expireAfter(sentAt, leaseMs);
      this.host.watchdog.watch(this, sentAt);
      resumed = true;
      // A watchdog that already stopped (shutdown) declares the lease lost instead of watching it.
      if (this.lostError) throw this.lostError;
    } finally {
      if (!resumed) this.host.watchdog.resume(this);
    }
  }

  private assertExtendable(): void {
    this.assertHeld();
    if (this.state !== 'held') throw new LeaseReleasedError(`Lease on "${this.key}" was already released; it cannot be extended.`);
  }

  /**
   * Gives the key back (token-checked; with `minHoldMs` the key is kept until that much time has passed
   * since the grant) once every scope running under the lease has finished — joined re-entrant calls and
   * transactions that ran work under it included, but not the scope that calls `release()` itself.
   * Idempotent.
   *
   * Rejects with `LeaseLostError` when the lease turned out to be lost (its `signal` aborted): the work
   * done under it may have overlapped another holder's. Rejects with `LockStoreUnavailableError` when the
   * store could not be reached: the key then expires on its own after the lease.
   */
  release(): Promise<void> {
    // A lease no scope runs under (a manual acquire) has none in the caller's chain either: no lookup.
    this.releasing ??= this.releaseOnce(this.idle ? 0 : this.host.scopesHere(this));
    return this.releasing;
  }

  /**
   * `await using` support: releases at the end of the block, or, inside a transaction, after it commits or
   * rolls back (the transaction's COMMIT then checks the lease). A lease lost by then makes the disposal
   * throw `LeaseLostError`; when the block itself threw too, the language raises a `SuppressedError` whose
   * `error` is the `LeaseLostError` and whose `suppressed` is the block's own error. A store failure on
   * release is reported through the `release-failed` event instead, so it cannot mask the block's outcome.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.endScope();
  }

  /**
   * @internal The scope that took the lease has ended. Inside a transaction the transaction now holds the
   * lease (see `holdForTransaction`) and the release waits for its COMMIT or ROLLBACK; otherwise the lease
   * is released now. Rejects with `LeaseLostError` for a lost lease and with a broken integration's error
   * (the key then goes back at once); a store failure on release is an event only.
   */
  async endScope(): Promise<void> {
    let heldByTransaction: boolean;
    try {
      heldByTransaction = this.holdForTransaction();
    } catch (integrationError) {
      await this.release().catch(ignore);
      throw integrationError;
    }
    if (heldByTransaction) {
      void this.release().catch(ignore);
      return;
    }
    try {
      await this.release();
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
    }
  }

  /**
   * @internal A scope has run work under this lease: a transaction active here holds the lease too, until
   * it completes (the `deferred` event). A broken integration's error propagates.
   */
  holdForTransaction(): boolean {
    const held = holdForTransaction(this, this.host);
    if (held) this.host.events.emit('deferred', () => ({ ...this.describe(), heldMs: this.heldMs() }));
    return held;
  }

  /** @internal True when no scope runs under the lease. */
  get idle(): boolean {
    return this.scopes === undefined || this.scopes.idle();
  }

  /** What a lease shows when logged or serialised: never the ownership token. */
  toJSON(): { key: string; fencingToken: number; expiresAt: number; held: boolean } {
    return { key: this.key, fencingToken: this.fencingToken, expiresAt: this.localExpiry, held: this.held };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Lease ${JSON.stringify(this.toJSON())}`;
  }

  /** @internal A scope starts running under this lease. */
  enterScope(): void {
    (this.scopes ??= new ScopeCount()).enter();
  }

  /** @internal A scope running under this lease has ended. */
  exitScope(): void {
    this.scopes!.exit();
  }

  /**
   * @internal Throws the lease's `LeaseLostError` if it is lost — including when its local deadline has
   * passed and no timer has said so yet.
   */
  assertHeld(): void {
    this.confirmHeld();
    if (this.lostError) throw this.lostError;
  }

  /** @internal Whether the lease is still held, declaring it lost first if its local deadline has passed. */
  stillHeld(): boolean {
    this.confirmHeld();
    return this.state === 'held';
  }

  /** @internal What a scope that ended with `outcome` (its error) must report: a loss, with the error as cause. */
  lostDuring(error: unknown): unknown {
    this.confirmHeld();
    const lost = this.lostError;
    if (!lost || error === lost) return error;
    return new LeaseLostError(this.key, lost.reason, { cause: error });
  }

  /**
   * Declares the lease lost as soon as its local deadline has passed, without waiting for the
   * watchdog's timer: after the process was frozen (GC pause, SIGSTOP, a blocked event loop) timers fire
   * late, and a commit or a result must not slip through before they do.
   */
  private confirmHeld(): void {
    if (this.state === 'held' && Date.now() >= this.lossAt) this.onLost('expired');
  }

  /** A grant or renewal sent at `sentAt` started a TTL of `ttlMs` in the store. */
  private expireAfter(sentAt: number, ttlMs: number): void {
    this.localExpiry = sentAt + ttlMs;
    // The drift of the TTL counted: 1 % of a long lease can exceed a hand-off's short TTL.
    this.lossAt = this.localExpiry - clockDriftMs(ttlMs);
  }

  /** @internal A renewal that asked for `leaseMs` and was sent at `sentAt` got through. */
  onRenewed(sentAt: number, leaseMs: number, latencyMs: number): void {
    this.expireAfter(sentAt, leaseMs);
    if (this.host.events.wants('renewed')) this.host.events.emit('renewed', () => ({ ...this.describe(), expiresAt: this.localExpiry, latencyMs }));
  }

  /** @internal */
  onRenewFailed(error: unknown, latencyMs: number): void {
    this.host.events.emit('renew-failed', () => ({ ...this.describe(), error, latencyMs }));
  }

  /** @internal */
  onLost(reason: LeaseLostReason, renewLatencyMs?: number): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'lost';
    this.host.watchdog.unwatch(this);
    this.host.settled(this);
    this.host.events.emit('lost', () => ({
      ...this.describe(),
      reason,
      heldMs: this.heldMs(),
      ...(renewLatencyMs === undefined ? {} : { renewLatencyMs }),
    }));
    // A renewal that got through after we gave up would keep the key: hand it back (token-checked).
    if (reason === 'expired') this.host.store.release(this.key, this.token, this.keptMs()).catch(ignore);
    this.lostError = new LeaseLostError(this.key, reason);
    this.abortController?.abort(this.lostError);
  }

  /**
   * @internal Shutdown, past its grace period: whoever still works under this lease is told it is gone
   * (signal aborted, a pending transaction rolls back), then the key is given back — kept for what remains
   * of `minHoldMs`, so a cron tick abandoned at shutdown does not run again elsewhere at once.
   */
  async abandon(): Promise<void> {
    if (this.state !== 'held') return;
    this.onLost('shutdown');
    await this.host.store.release(this.key, this.token, this.keptMs()).catch(() => undefined);
  }

  private keptMs(): number {
    return this.minHoldMs === 0 ? 0 : Math.max(0, this.minHoldMs - (Date.now() - this.grantedAt));
  }

  /** `own`: scopes of this lease in the caller's own call chain, which must not wait for themselves. */
  private async releaseOnce(own: number): Promise<void> {
    if (this.scopes && !this.scopes.idle(own)) await this.scopes.whenIdle(own);
    this.host.watchdog.unwatch(this);
    // A lease past its deadline is reported lost, not released as if nothing happened (its key, if still
    // ours, is handed back by onLost).
    this.confirmHeld();
    if (this.lostError) throw this.lostError;
    if (this.state !== 'held') return;
    this.state = 'releasing';
    const keptMs = this.keptMs();
    let released: boolean;
    try {
      released = await this.host.store.release(this.key, this.token, keptMs);
    } catch (error) {
      this.state = 'released';
      this.host.settled(this);
      this.host.events.emit('release-failed', () => ({ ...this.describe(), error, heldMs: this.heldMs() }));
      throw error;
    }
    if (!released) {
      this.onLost('rejected');
      throw this.lostError;
    }
    if (this.state !== 'releasing') return;
    this.state = 'released';
    this.host.settled(this);
    if (this.host.events.wants('released')) this.host.events.emit('released', () => ({ ...this.describe(), heldMs: this.heldMs(), keptMs }));
  }

  private heldMs(): number {
    return Date.now() - this.grantedAt;
  }

  private describe(): LockLeaseEvent {
    return { key: this.key, name: this.name, fencingToken: this.fencingToken, tokenDigest: this.tokenDigest };
  }
}
