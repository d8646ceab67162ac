import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import { AcquireTally } from '../events/acquire-tally.js';
import type { LockEvents } from '../events/lock-events.js';
import { assertLockKey } from '../keys/lock-key.js';
import type { ResolvedLockOptions } from '../options/lock-module-options.interface.js';
import { durationOption } from '../support/duration-option.js';
import { nameOption } from '../support/name-option.js';
import type { AcquireResult, LockGranted, LockStore } from '../stores/lock-store.interface.js';
import type { AcquireOptions } from '../options/acquire-options.interface.js';
import type { FirstAttempt, WaitOutcome } from './retry-loop.js';
import type { LeaseHost } from '../lease/lease-host.interface.js';
import { Lease } from '../lease/lease.js';
import type { ShutdownGate } from './shutdown-gate.js';
import { newToken, triesFirst, waitForGrant, type GrantSource } from './wait-strategy.js';

/** What a LockService acquires with; the leases it grants are added to `held`. */
export interface LeaseGrantsContext {
  readonly options: ResolvedLockOptions;
  readonly store: LockStore;
  readonly events: LockEvents;
  readonly gate: ShutdownGate;
  readonly acquisition: GrantSource;
  readonly host: LeaseHost;
  readonly held: Set<Lease>;
  /** Throws when the caller's own chain or transaction holds `key` (a manual acquire would wait for itself). */
  assertNotHeldHere(key: string): void;
}

/**
 * Turns acquisitions into leases for one LockService: validation, shutdown, events, the fast path and the
 * wait. Every lease of the application comes from here.
 */
export class LeaseGrants {
  private readonly options: ResolvedLockOptions;
  private readonly store: LockStore;
  private readonly events: LockEvents;
  private readonly gate: ShutdownGate;
  private readonly acquisition: GrantSource;
  private readonly host: LeaseHost;
  private readonly held: Set<Lease>;
  private readonly assertNotHeldHere: (key: string) => void;

  constructor(context: LeaseGrantsContext) {
    ({ options: this.options, store: this.store, events: this.events, gate: this.gate, acquisition: this.acquisition, host: this.host, held: this.held } = context);
    this.assertNotHeldHere = (key) => context.assertNotHeldHere(key);
  }

  /**
   * The one acquisition path. `required`: a key that stays taken throws `LockNotAcquiredError` instead of
   * resolving null. Uncontended, it costs one store call and no more than the lease: the first attempt is
   * made at once (see `triesFirst`); queues, subscriptions and shutdown signals are set up only when it
   * finds the key taken.
   */
  async take(key: string, options: AcquireOptions, waitMs: number, checked: boolean, required: boolean): Promise<Lease | null> {
    assertLockKey(key);
    const tally = new AcquireTally(key, options.name === undefined ? undefined : nameOption('name', options.name));
    if (this.gate.closed) {
      this.events.emit('not-acquired', () => ({ ...tally.report(), reason: 'shutdown' }));
      throw this.gate.refusal(key);
    }
    if (!checked) this.assertNotHeldHere(key);
    // Unset values are the module's, validated at startup.
    const leaseMs = options.leaseMs === undefined ? this.options.leaseMs : durationOption('leaseMs', options.leaseMs, 10);
    const minHoldMs = options.minHoldMs === undefined ? 0 : durationOption('minHoldMs', options.minHoldMs, 0);
    if (waitMs !== this.options.waitMs) durationOption('waitMs', waitMs, 0);
    const { signal } = options;
    let lease: Lease | null = null;
    this.gate.enter();
    try {
      signal?.throwIfAborted();
      if (triesFirst(this.acquisition, key, waitMs)) {
        // The fast path: one attempt, nothing set up around it (and no async step of its own).
        const token = newToken();
        const sentAt = Date.now();
        tally.attempts = 1;
        let result: AcquireResult | undefined;
        let failure: unknown;
        try {
          result = await this.store.acquire(key, token, leaseMs, this.options.holder);
        } catch (error) {
          if (waitMs === 0 || !(error instanceof LockStoreUnavailableError)) throw error;
          failure = error;
        }
        if (result?.acquired) {
          const handed = this.handOut(tally, options, token, result, leaseMs, minHoldMs, sentAt, undefined);
          lease = handed instanceof Lease ? handed : await handed;
        } else {
          if (result && this.events.wants('contention')) this.events.emit('contention', () => ({ key, name: tally.name, holderTtlMs: result.ttlMs }));
          if (waitMs > 0) lease = await this.waitAndHandOut(tally, options, waitMs, leaseMs, minHoldMs, { token, result, failure, sentAt });
        }
      } else {
        lease = await this.waitAndHandOut(tally, options, waitMs, leaseMs, minHoldMs, undefined);
      }
      if (!lease && this.events.wants('not-acquired')) this.events.emit('not-acquired', () => ({ ...tally.report(), reason: 'taken' }));
    } catch (error) {
      // Every acquisition that ends without a lease is reported, the fail-closed ones included.
      const reason = this.gate.closed ? 'shutdown' : signal?.aborted ? 'aborted' : undefined;
      if (reason) this.events.emit('not-acquired', () => ({ ...tally.report(), reason }));
      else this.events.emit('store-unavailable', () => ({ ...tally.report(), error }));
      throw error;
    } finally {
      this.gate.leave();
    }
    if (!lease && required) throw new LockNotAcquiredError(key, Date.now() - tally.startedAt);
    return lease;
  }

  private async waitAndHandOut(
    tally: AcquireTally,
    options: AcquireOptions,
    waitMs: number,
    leaseMs: number,
    minHoldMs: number,
    first: FirstAttempt | undefined,
  ): Promise<Lease | null> {
    const waited = await this.wait(tally, options, waitMs, leaseMs, first);
    if (!waited?.granted) return null;
    return await this.handOut(tally, options, waited.token, waited.granted, leaseMs, minHoldMs, waited.lastSentAt, waited.grantedTtlMs);
  }

  /**
   * The lease of a grant, watched and held; a promise only for the rare grant that must be given back
   * at once (shutdown began, the caller aborted), so the common one costs no promise turn.
   */
  private handOut(
    tally: AcquireTally,
    options: AcquireOptions,
    token: string,
    granted: LockGranted,
    leaseMs: number,
    minHoldMs: number,
    sentAt: number,
    ttlMs: number | undefined,
  ): Lease | Promise<never> {
    const { key } = tally;
    if (this.gate.closed) {
      // Granted while the application began shutting down: nothing is handed out unwatched.
      return this.store.release(key, token, 0).then(
        () => Promise.reject(this.gate.refusal(key)),
        () => Promise.reject(this.gate.refusal(key)),
      );
    }
    const lease = new Lease(this.host, {
      key,
      name: tally.name,
      token,
      fencingToken: granted.fencingToken,
      leaseMs,
      minHoldMs,
      autoRenew: options.autoRenew ?? true,
      sentAt,
      ttlMs,
    });
    // The lease may already be lost (a watchdog that stopped refuses to watch it): then it is not held.
    if (lease.held) this.held.add(lease);
    const { signal } = options;
    if (signal?.aborted) {
      return lease.release().then(
        () => Promise.reject(signal.reason),
        () => Promise.reject(signal.reason),
      );
    }
    if (this.events.wants('acquired')) {
      this.events.emit('acquired', () => ({ ...tally.report(), fencingToken: lease.fencingToken, tokenDigest: lease.tokenDigest }));
    }
    return lease;
  }

  /** The slow path: waits within `waitMs`, cut short at shutdown. */
  private async wait(
    tally: AcquireTally,
    options: AcquireOptions,
    waitMs: number,
    leaseMs: number,
    first: FirstAttempt | undefined,
  ): Promise<WaitOutcome | undefined> {
    // A caller that may wait is cut short at shutdown; without a signal of its own it shares the service's.
    const wait = this.gate.waitSignal(options.signal);
    try {
      return await waitForGrant(this.acquisition, { key: tally.key, leaseMs, waitMs, tally, signal: wait.signal }, first);
    } catch (error) {
      throw this.gate.isShutdownAbort(error) ? this.gate.refusal(tally.key) : error;
    } finally {
      wait.done();
    }
  }
}
