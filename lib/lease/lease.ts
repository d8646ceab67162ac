import { LeaseLostError, type LeaseLostReason } from '../errors/lease-lost.error.js';
import { LeaseReleasedError } from '../errors/lease-released.error.js';
import { durationOption } from '../support/duration-option.js';
import type { LockLeaseEvent } from '../events/lock-event.types.js';
import { tokenDigest } from '../events/token-digest.js';
import type { WatchedLease } from '../watchdog/watched-lease.interface.js';
import { LeaseDeadline } from './lease-deadline.js';
import { extendOnce } from './lease-extension.js';
import type { LeaseGrant, LeaseHost } from './lease-host.interface.js';
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
  /** The ownership token: private, so `{ ...lease }`, `Object.keys` and serialisation never see it. */
  readonly #token: string;
  /** @internal False: kept alive by `extend()` calls only. */
  readonly autoRenew: boolean;
  /** @internal The lease length every renewal asks for; changed by `extend()`. */
  leaseMs: number;
  // Fields most leases never set are declared only (no slot until set); AbortController and the scope count
  // are made on first use: a lease taken and released by hand costs neither.
  declare private abortController?: AbortController;
  declare private digest?: string;
  /** @internal Set when the lease is lost; the reason its signal aborts with. */
  declare lostError?: LeaseLostError;
  private readonly grantedAt = Date.now();
  private minHoldMs: number;
  private readonly expiry = new LeaseDeadline();
  private state: LeaseState = 'held';
  declare private releasing?: Promise<void>;
  declare private extending?: Promise<void>;
  /** Scopes running under this lease: the taking scope and joined ones. */
  declare private scopes?: ScopeCount;
  /** @internal The watchdog's (see `WatchedLeases`). */
  declare watchSlot?: unknown;

  /** @internal Created by LockService only, which records it before the watchdog watches it (or loses it). */
  constructor(
    private readonly host: LeaseHost,
    grant: LeaseGrant,
  ) {
    this.key = grant.key;
    this.name = grant.name;
    this.#token = grant.token;
    this.fencingToken = grant.fencingToken;
    this.leaseMs = grant.leaseMs;
    this.minHoldMs = grant.minHoldMs;
    this.autoRenew = grant.autoRenew;
    this.expiry.restart(grant.sentAt, grant.ttlMs);
  }

  /** Aborted, with a `LeaseLostError` as reason, when the lease is lost. Not aborted by a normal release. */
  get signal(): AbortSignal {
    this.abortController ??= new AbortController();
    if (this.lostError && !this.abortController.signal.aborted) this.abortController.abort(this.lostError);
    return this.abortController.signal;
  }

  /** @internal The ownership token, for the store calls that prove ownership. Never log it. */
  get token(): string {
    return this.#token;
  }

  /** @internal Short digest of the token, for logs and events. */
  get tokenDigest(): string {
    return (this.digest ??= tokenDigest(this.token));
  }

  /** @internal The module's `renewIntervalMs` (default lease / 3), at most half the current lease (`extend()`). */
  get renewIntervalMs(): number {
    return Math.max(1, Math.floor(Math.min(this.host.renewIntervalMs ?? this.leaseMs / 3, this.leaseMs / 2)));
  }

  /** Local view of when the lease expires (epoch ms) unless renewed: the last renewal's send time + lease. */
  get expiresAt(): number {
    return this.expiry.expiresAt;
  }

  /** @internal When the lease counts as lost unless renewed (see LeaseDeadline): watchdog and commits go by it. */
  get deadline(): number {
    return this.expiry.lossAt;
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
    const run = (this.extending ?? Promise.resolve()).then(() => extendOnce(this, this.host, leaseMs));
    this.extending = run.catch(ignore);
    return run;
  }

  /** @internal Throws unless the lease can still be extended: lost, or released. */
  assertExtendable(): void {
    this.assertHeld();
    if (this.state !== 'held') throw new LeaseReleasedError(`Lease on "${this.key}" was already released; it cannot be extended.`);
  }

  /**
   * Gives the key back (token-checked; kept until `minHoldMs` after the grant) once every scope running under
   * the lease has finished (joined calls and transactions that ran work under it, not the caller's own scope).
   * Idempotent. Rejects with `LeaseLostError` when the lease turned out to be lost (the work done under it may
   * have overlapped another holder's), with `LockStoreUnavailableError` when the store could not be reached
   * (the key then expires on its own after the lease).
   */
  release(): Promise<void> {
    // A lease no scope runs under (a manual acquire) has none in the caller's chain either: no lookup.
    this.releasing ??= this.releaseOnce(this.idle ? 0 : this.host.context.count(this));
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
    return this.host.transactions.endScope(this);
  }

  /** @internal True when no scope runs under the lease. */
  get idle(): boolean {
    return this.scopes === undefined || this.scopes.idle();
  }

  /** What a lease shows when logged or serialised: never the ownership token. */
  toJSON(): { key: string; fencingToken: number; expiresAt: number; held: boolean } {
    return { key: this.key, fencingToken: this.fencingToken, expiresAt: this.expiresAt, held: this.held };
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

  /** @internal Throws the `LeaseLostError` of a lost lease, also one past its deadline no timer has seen yet. */
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
   * Declares the lease lost once its local deadline has passed, without waiting for the watchdog: after a
   * freeze (GC pause, SIGSTOP, a blocked event loop) timers fire late, and no commit may slip through first.
   */
  private confirmHeld(): void {
    if (this.state === 'held' && this.expiry.passed()) this.onLost('expired');
  }

  /** @internal An extension to `leaseMs`, sent at `sentAt`, got through: later renewals keep that length. */
  extended(sentAt: number, leaseMs: number): void {
    this.leaseMs = leaseMs;
    this.expiry.restart(sentAt, leaseMs);
  }

  /** @internal A renewal that asked for `leaseMs` and was sent at `sentAt` got through. */
  onRenewed(sentAt: number, leaseMs: number, latencyMs: number): void {
    this.expiry.restart(sentAt, leaseMs);
    if (this.host.events.wants('renewed')) this.host.events.emit('renewed', () => ({ ...this.describe(), expiresAt: this.expiresAt, latencyMs }));
  }

  /** @internal A renewal's outcome is unknown; the watchdog retries it until the deadline. */
  onRenewFailed(error: unknown, latencyMs: number): void {
    this.host.events.emit('renew-failed', () => ({ ...this.describe(), error, latencyMs }));
  }

  /** @internal Returns the key's give-back when the loss hands it back (expiry, shutdown). */
  onLost(reason: LeaseLostReason, renewLatencyMs?: number): Promise<void> | undefined {
    if (this.state === 'released' || this.state === 'lost') return undefined;
    this.state = 'lost';
    const renewal = this.host.watchdog.unwatch(this);
    this.host.settled(this);
    this.host.events.emit('lost', () => ({ ...this.describe(), reason, heldMs: this.heldMs(), ...(renewLatencyMs === undefined ? {} : { renewLatencyMs }) }));
    this.lostError = new LeaseLostError(this.key, reason);
    this.abortController?.abort(this.lostError);
    // Expired: a renewal that got through after we gave up would keep the key. Shutdown: see abandon.
    return reason === 'expired' || reason === 'shutdown' ? this.giveBack(renewal).catch(ignore) : undefined;
  }

  /**
   * @internal Shutdown, past its grace period: whoever still works under this lease is told it is gone
   * (signal aborted, a pending transaction rolls back), then the key is given back, kept for what remains
   * of `minHoldMs`, so a cron tick abandoned at shutdown does not run again elsewhere at once.
   */
  async abandon(): Promise<void> {
    if (this.state === 'held') await this.onLost('shutdown');
  }

  /**
   * The key back after a loss, kept for what remains of `minHoldMs`; a renewal on its way lands first (stores
   * renew a kept key: one landing after would stretch it to a whole lease). releaseOnce does it inline.
   */
  private async giveBack(renewal: Promise<void> | undefined): Promise<void> {
    if (renewal && this.keptMs() > 0) await renewal;
    await this.host.store.release(this.key, this.token, this.keptMs());
  }

  /** @internal A multi-key acquisition that failed gives this key back at once: its work never ran. */
  waiveMinHold(): void {
    this.minHoldMs = 0;
  }

  private keptMs(): number {
    return this.minHoldMs === 0 ? 0 : Math.max(0, this.minHoldMs - (Date.now() - this.grantedAt));
  }

  /** `own`: scopes of this lease in the caller's own call chain, which must not wait for themselves. */
  private async releaseOnce(own: number): Promise<void> {
    if (this.scopes && !this.scopes.idle(own)) await this.scopes.whenIdle(own);
    // Past its deadline it is reported lost, not released as if nothing happened (onLost hands the key back).
    this.confirmHeld();
    const renewal = this.host.watchdog.unwatch(this);
    if (this.lostError) throw this.lostError;
    if (this.state !== 'held') return;
    this.state = 'releasing';
    // A renewal on its way lands first (see giveBack).
    if (renewal && this.keptMs() > 0) await renewal;
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

  /** @internal How long the lease has been held, for events. */
  heldMs(): number {
    return Date.now() - this.grantedAt;
  }

  /** @internal The fields every event about this lease carries. */
  describe(): LockLeaseEvent {
    return { key: this.key, name: this.name, fencingToken: this.fencingToken, tokenDigest: this.tokenDigest };
  }
}
