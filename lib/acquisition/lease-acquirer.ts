import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import { AcquireTally } from '../events/acquire-tally.js';
import type { LockEvents } from '../events/lock-events.js';
import { assertLockKey } from '../keys/lock-key.js';
import type { LeaseGrant, LeaseHost } from '../lease/lease-host.interface.js';
import { Lease } from '../lease/lease.js';
import type { AcquireOptions } from '../options/acquire-options.interface.js';
import type { ResolvedLockOptions } from '../options/lock-module-options.interface.js';
import type { AcquireResult, LockGranted, LockStore } from '../stores/lock-store.interface.js';
import { durationOption } from '../support/duration-option.js';
import { nameOption } from '../support/name-option.js';
import type { LeaseWatchdog } from '../watchdog/lease.watchdog.js';
import { newToken } from './ownership-token.js';
import type { FirstAttempt, WaitOutcome } from './retry-loop.js';
import type { ShutdownGate } from './shutdown-gate.js';
import { triesFirst, waitForGrant, type GrantSource } from './wait-strategy.js';

/**
 * Which public call an acquisition serves, which decides what a key that stays taken gives and whether the
 * caller's own call chain was already checked for the key:
 * - `'try'` (`tryAcquire`): null when taken; checks the call chain;
 * - `'acquire'` (`acquire`): `LockNotAcquiredError` when taken; checks the call chain;
 * - `'scope'` (`withLock`, locked methods): `LockNotAcquiredError` when taken; the caller checked already.
 */
export type AcquisitionKind = 'try' | 'acquire' | 'scope';

/** What a LockService acquires with; the leases it grants are added to `held`. */
export interface LeaseAcquirerContext {
  readonly options: ResolvedLockOptions;
  readonly store: LockStore;
  readonly events: LockEvents;
  readonly watchdog: LeaseWatchdog;
  readonly gate: ShutdownGate;
  readonly waiting: GrantSource;
  readonly host: LeaseHost;
  readonly held: Set<Lease>;
  /** Throws when the caller's own chain or transaction holds `key` (a manual acquire would wait for itself). */
  assertNotHeldHere(key: string): void;
}

/** A grant as the store gave it, before it becomes a lease. */
interface Granted {
  readonly tally: AcquireTally;
  readonly options: AcquireOptions;
  readonly token: string;
  readonly result: LockGranted;
  readonly leaseMs: number;
  readonly minHoldMs: number;
  readonly sentAt: number;
  /** The TTL the grant started with, when shorter than `leaseMs` (a queue's hand-off). */
  readonly ttlMs: number | undefined;
}

/**
 * Turns acquisitions into leases for one LockService: validation, shutdown, events, the fast path and the
 * wait. Every lease of the application comes from here.
 */
export class LeaseAcquirer {
  constructor(private readonly context: LeaseAcquirerContext) {}

  /**
   * The one acquisition path. Uncontended, it costs one store call and no more than the lease: the first
   * attempt is made at once (see `triesFirst`); queues, subscriptions and shutdown signals are set up only
   * when it finds the key taken. Resolves null only for `'try'` (see {@link AcquisitionKind}).
   */
  async acquire(key: string, options: AcquireOptions, waitMs: number, kind: AcquisitionKind): Promise<Lease | null> {
    const { context } = this;
    const { events, gate, store } = context;
    assertLockKey(key);
    const tally = new AcquireTally(key, options.name === undefined ? undefined : nameOption('name', options.name));
    if (gate.closed) {
      events.emit('not-acquired', () => ({ ...tally.report(), reason: 'shutdown' }));
      throw gate.refusal(key);
    }
    if (kind !== 'scope') context.assertNotHeldHere(key);
    // Unset values are the module's, validated at startup.
    const leaseMs = options.leaseMs === undefined ? context.options.leaseMs : durationOption('leaseMs', options.leaseMs, 10);
    const minHoldMs = options.minHoldMs === undefined ? 0 : durationOption('minHoldMs', options.minHoldMs, 0);
    if (waitMs !== context.options.waitMs) durationOption('waitMs', waitMs, 0);
    const { signal } = options;
    let lease: Lease | null = null;
    gate.enter();
    try {
      signal?.throwIfAborted();
      if (triesFirst(context.waiting, key, waitMs)) {
        // The fast path: one attempt, nothing set up around it (and no async step of its own).
        const token = newToken();
        const sentAt = Date.now();
        tally.attempts = 1;
        let result: AcquireResult | undefined;
        let failure: unknown;
        try {
          result = await store.acquire(key, token, leaseMs, context.options.holder);
        } catch (error) {
          if (waitMs === 0 || !(error instanceof LockStoreUnavailableError)) throw error;
          failure = error;
        }
        if (result?.acquired) {
          const handed = this.handOut({ tally, options, token, result, leaseMs, minHoldMs, sentAt, ttlMs: undefined });
          lease = handed instanceof Lease ? handed : await handed;
        } else {
          if (result && events.wants('contention')) events.emit('contention', () => ({ key, name: tally.name, holderTtlMs: result.ttlMs }));
          if (waitMs > 0) lease = await this.waitAndHandOut(tally, options, waitMs, leaseMs, minHoldMs, { token, result, failure, sentAt });
        }
      } else {
        lease = await this.waitAndHandOut(tally, options, waitMs, leaseMs, minHoldMs, undefined);
      }
      if (!lease && events.wants('not-acquired')) events.emit('not-acquired', () => ({ ...tally.report(), reason: 'taken' }));
    } catch (error) {
      // Every acquisition that ends without a lease is reported, the fail-closed ones included.
      const reason = gate.closed ? 'shutdown' : signal?.aborted ? 'aborted' : undefined;
      if (reason) events.emit('not-acquired', () => ({ ...tally.report(), reason }));
      else events.emit('store-unavailable', () => ({ ...tally.report(), error }));
      throw error;
    } finally {
      gate.leave();
    }
    if (!lease && kind !== 'try') throw new LockNotAcquiredError(key, Date.now() - tally.startedAt);
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
    const { token, granted: result, lastSentAt: sentAt, grantedTtlMs: ttlMs } = waited;
    return await this.handOut({ tally, options, token, result, leaseMs, minHoldMs, sentAt, ttlMs });
  }

  /**
   * The lease of a grant, recorded and then watched; a promise only for the rare grant that must be given
   * back at once (shutdown began, the caller aborted), so the common one costs no promise turn.
   */
  private handOut(granted: Granted): Lease | Promise<never> {
    const { gate, store, events, held, watchdog, host } = this.context;
    const { tally, options, token, leaseMs } = granted;
    const { key } = tally;
    if (gate.closed) {
      // Granted while the application began shutting down: nothing is handed out unwatched.
      return store.release(key, token, 0).then(
        () => Promise.reject(gate.refusal(key)),
        () => Promise.reject(gate.refusal(key)),
      );
    }
    const grant: LeaseGrant = {
      key,
      name: tally.name,
      token,
      fencingToken: granted.result.fencingToken,
      leaseMs,
      minHoldMs: granted.minHoldMs,
      autoRenew: options.autoRenew ?? true,
      sentAt: granted.sentAt,
      ttlMs: granted.ttlMs ?? leaseMs,
    };
    const lease = new Lease(host, grant);
    // Recorded before it is watched: a watchdog that stopped already (shutdown) declares it lost at once,
    // which settles it out of `held` again.
    held.add(lease);
    watchdog.watch(lease, grant.sentAt, grant.ttlMs);
    const { signal } = options;
    if (signal?.aborted) {
      return lease.release().then(
        () => Promise.reject(signal.reason),
        () => Promise.reject(signal.reason),
      );
    }
    if (events.wants('acquired')) {
      events.emit('acquired', () => ({ ...tally.report(), fencingToken: lease.fencingToken, tokenDigest: lease.tokenDigest }));
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
    const { gate, waiting } = this.context;
    // A caller that may wait is cut short at shutdown; without a signal of its own it shares the service's.
    const wait = gate.waitSignal(options.signal);
    try {
      return await waitForGrant(waiting, { key: tally.key, leaseMs, waitMs, tally, signal: wait.signal }, first);
    } catch (error) {
      throw gate.isShutdownAbort(error) ? gate.refusal(tally.key) : error;
    } finally {
      wait.done();
    }
  }
}
