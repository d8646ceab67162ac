import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import { LockReentryError } from '../errors/lock-reentry.error.js';
import { AcquireTally } from '../events/acquire-tally.js';
import { LockEvents } from '../events/lock-events.js';
import { assertLockKey } from '../keys/lock-key.js';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import type { ResolvedLockOptions } from '../module/lock-module-options.interface.js';
import { durationOption } from '../support/duration-option.js';
import { nameOption } from '../support/name-option.js';
import { InjectLockStore, type AcquireResult, type LockGranted, type LockStore } from '../stores/lock-store.interface.js';
import { LeaseWatchdog, type WatchdogStatus } from '../watchdog/lease.watchdog.js';
import { registerHeldLeaseCheck } from '../transactions/held-leases.js';
import type { FirstAttempt, WaitOutcome } from './acquire-waiter.js';
import { LeaseContext } from './lease-context.js';
import { LocalWaitQueue } from './local-wait-queue.js';
import type { LeaseHost } from './lease-host.interface.js';
import { Lease } from './lease.js';
import { ShutdownGate } from './shutdown-gate.js';
import { newToken, triesFirst, waitForGrant, type GrantSource } from './wait-for-grant.js';
import { TransactionOwnedLeases } from './transaction-owned-leases.js';

/** What {@link LockService.checkHealth} reports. */
export interface LockHealth {
  readonly storeRoundTripMs: number;
  readonly watchdog: WatchdogStatus;
  readonly shuttingDown: boolean;
}

/** Per-call options; unset values come from the module options. */
export interface AcquireOptions {
  /** @default module `leaseMs` (30000) */
  leaseMs?: number;
  /** 0 = one attempt. @default module `waitMs` (5000) */
  waitMs?: number;
  /**
   * Keep the key at least this long after the grant, even if released earlier (cron de-duplication).
   * @default 0
   */
  minHoldMs?: number;
  /**
   * Renew the lease in the background while it is held. Without it, only `extend()` keeps it alive.
   * @default true
   */
  autoRenew?: boolean;
  /** Stops waiting; an attempt that succeeds after the abort is released at once. */
  signal?: AbortSignal;
  /**
   * In `withLock` (and locked methods): if this call chain already holds the key, run inside that lease
   * instead of failing with `LockReentryError`. The lease is released once the outermost scope and every
   * scope joined onto it have ended (also a joined call that was not awaited).
   * @default false
   */
  reentrant?: boolean;
  /**
   * What events and metrics call this lock instead of its key (keys are unbounded, a metric attribute must
   * not be): a template like `'account:{id}'` or a purpose like `'transfer'`. Keep it low-cardinality.
   * @default undefined (a `@DistributedLock` method passes its key template, or `Class.method` for a key function)
   */
  name?: string;
}

/**
 * Takes and releases cluster-wide leases. One instance per application: it owns the application's leases
 * and, on shutdown, drains and releases them and closes the store.
 */
@Injectable()
export class LockService implements OnModuleInit, OnApplicationShutdown {
  private readonly held = new Set<Lease>();
  private readonly context = new LeaseContext();
  private readonly acquisition: GrantSource;
  private readonly host: LeaseHost;
  private readonly gate = new ShutdownGate(() => this.held.size);
  private readonly owned: TransactionOwnedLeases;
  private unregisterLeaseCheck?: () => void;

  constructor(
    @Inject(RESOLVED_LOCK_OPTIONS) private readonly options: ResolvedLockOptions,
    @InjectLockStore() private readonly store: LockStore,
    private readonly watchdog: LeaseWatchdog,
    private readonly events: LockEvents,
  ) {
    this.owned = new TransactionOwnedLeases(options.transactionSynchronizer);
    this.acquisition = { store, events, options, waiters: new LocalWaitQueue() };
    this.host = {
      store,
      watchdog,
      events,
      transactions: options.transactionSynchronizer,
      renewIntervalMs: options.renewIntervalMs,
      settled: (lease) => {
        this.held.delete(lease);
        this.gate.changed();
      },
      retainInTransaction: (lease) => this.owned.retain(lease),
      scopesHere: (lease) => this.context.count(lease),
    };
  }

  /**
   * A transaction started inside a locked scope checks that scope's leases before it commits. Registered
   * once the application starts (and removed at shutdown), in the process-wide list every copy of the
   * package reads.
   */
  onModuleInit(): void {
    this.unregisterLeaseCheck ??= registerHeldLeaseCheck(() => {
      for (const lease of this.context.leases()) lease.assertHeld();
    });
  }

  /** Waits up to `waitMs` for the key; throws `LockNotAcquiredError` if it stays taken. */
  acquire(key: string, options: AcquireOptions = NO_OPTIONS): Promise<Lease> {
    return this.take(key, options, false);
  }

  /** One attempt: the lease, or null if the key is taken. */
  tryAcquire(key: string, options: Omit<AcquireOptions, 'waitMs'> = NO_OPTIONS): Promise<Lease | null> {
    return this.takeWithin(key, options, 0, false, false);
  }

  /** `acquire`; `checked` when the caller has already looked for this key in the current call chain. */
  private take(key: string, options: AcquireOptions, checked: boolean): Promise<Lease> {
    return this.takeWithin(key, options, options.waitMs ?? this.options.waitMs, checked, true) as Promise<Lease>;
  }

  /**
   * Runs `fn` under the lock and always releases. A business error from `fn` is rethrown unchanged; if the
   * lease was lost meanwhile, the call fails with `LeaseLostError` (with `fn`'s error, if any, as cause).
   *
   * Inside a transaction that already holds a deferred lease on `key` (an earlier locked call in the same
   * transaction), `fn` runs under that lease: the transaction owns the key until it completes.
   */
  withLock<T>(key: string, fn: (lease: Lease) => Promise<T> | T): Promise<T>;
  withLock<T>(key: string, options: AcquireOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T>;
  async withLock<T>(
    key: string,
    optionsOrFn: AcquireOptions | ((lease: Lease) => Promise<T> | T),
    maybeFn?: (lease: Lease) => Promise<T> | T,
  ): Promise<T> {
    const options = typeof optionsOrFn === 'function' ? NO_OPTIONS : optionsOrFn;
    const fn = typeof optionsOrFn === 'function' ? optionsOrFn : maybeFn!;
    const holder = this.context.holding(key);
    if (holder) {
      if (!options.reentrant) throw new LockReentryError(key);
      return this.context.join(holder, async () => fn(holder.lease));
    }
    // Outside transactions (the common case) nothing below asks the synchronizer again.
    if (!this.options.transactionSynchronizer.isTransactionActive()) return await this.runLocked(key, await this.take(key, options, true), fn);
    const owned = this.owned.frameFor(key);
    if (owned) return this.context.join(owned, async () => fn(owned.lease));
    const siblings = this.owned.watchSiblings(key, options.signal);
    if (!siblings) return this.runLocked(key, await this.take(key, options, true), fn);
    let lease: Lease;
    try {
      lease = await this.take(key, { ...options, signal: siblings.signal }, true);
    } catch (error) {
      const frame = siblings.joinable(error);
      if (!frame) throw error;
      return this.context.join(frame, async () => fn(frame.lease));
    } finally {
      siblings.done();
    }
    return this.runLocked(key, lease, fn);
  }

  private async runLocked<T>(key: string, lease: Lease, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    let value: T | undefined;
    let failed = false;
    let failure: unknown;
    try {
      value = await this.context.run(lease, fn);
    } catch (error) {
      failed = true;
      failure = error;
    }
    // Released now, or held by the transaction the call ran in until it completes. A failed release is
    // reported through the 'release-failed' event; the key expires on its own.
    try {
      await lease.endScope();
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      throw new LeaseLostError(key, error.reason, failed ? { cause: failure } : undefined);
    }
    if (failed) throw failure;
    return value as T;
  }

  /** The lease of the innermost locked scope (`withLock` or a locked method) running in this call chain. */
  current(): Lease | undefined {
    return this.context.current();
  }

  /**
   * For health checks: one round trip to the store (rejects with `LockStoreUnavailableError` when it does
   * not answer) and whether the watchdog keeps its renewals on time.
   */
  async checkHealth(): Promise<LockHealth> {
    const started = performance.now();
    await this.store.ping();
    return { storeRoundTripMs: performance.now() - started, watchdog: this.watchdog.status(), shuttingDown: this.gate.closed };
  }

  /**
   * Stops taking new leases: waits in progress end with `LockStoreUnavailableError`, and a store call
   * already on its way that comes back with a grant is released and refused the same way. Gives locked
   * calls still running up to `shutdownGraceMs` to finish (their leases stay renewed meanwhile), then tells
   * the rest their lease is gone and releases it, and closes the store. Nest calls this after the HTTP
   * server stopped accepting requests.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.gate.close(this.options.shutdownGraceMs);
    await Promise.allSettled([...this.held].map((lease) => lease.abandon()));
    this.watchdog.stop();
    this.unregisterLeaseCheck?.();
    await this.store.close();
  }

  /**
   * The one acquisition path. `required`: a key that stays taken throws `LockNotAcquiredError` instead of
   * resolving null. Uncontended, it costs one store call and no more than the lease: the first attempt is
   * made at once (see `triesFirst`); queues, subscriptions and shutdown signals are set up only when it
   * finds the key taken.
   */
  private async takeWithin(key: string, options: AcquireOptions, waitMs: number, checked: boolean, required: boolean): Promise<Lease | null> {
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
    let lease: Lease | null;
    this.gate.enter();
    try {
      signal?.throwIfAborted();
      lease = await this.grant(tally, options, waitMs, leaseMs, minHoldMs);
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

  /**
   * A manual `acquire` of a key this call chain or its transaction already holds could only wait for
   * itself until `waitMs`: it fails at once instead (`withLock` and locked methods join those leases).
   */
  private assertNotHeldHere(key: string): void {
    if (this.context.holding(key)) throw new LockReentryError(key);
    if (this.options.transactionSynchronizer.isTransactionActive() && this.owned.frameFor(key)) {
      throw new LockReentryError(key, 'transaction');
    }
  }

  private async grant(tally: AcquireTally, options: AcquireOptions, waitMs: number, leaseMs: number, minHoldMs: number): Promise<Lease | null> {
    const { key } = tally;
    let token: string;
    let sentAt: number;
    let granted: LockGranted;
    let ttlMs: number | undefined;
    if (triesFirst(this.acquisition, key, waitMs)) {
      // The fast path: one attempt, nothing set up around it.
      token = newToken();
      sentAt = Date.now();
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
        granted = result;
      } else {
        if (result && this.events.wants('contention')) this.events.emit('contention', () => ({ key, name: tally.name, holderTtlMs: result.ttlMs }));
        if (waitMs === 0) return null;
        const waited = await this.wait(tally, options, waitMs, leaseMs, { token, result, failure, sentAt });
        if (!waited?.granted) return null;
        ({ token, lastSentAt: sentAt, grantedTtlMs: ttlMs } = waited);
        granted = waited.granted;
      }
    } else {
      const waited = await this.wait(tally, options, waitMs, leaseMs, undefined);
      if (!waited?.granted) return null;
      ({ token, lastSentAt: sentAt, grantedTtlMs: ttlMs } = waited);
      granted = waited.granted;
    }
    if (this.gate.closed) {
      // Granted while the application began shutting down: nothing is handed out unwatched.
      await this.store.release(key, token, 0).catch(() => undefined);
      throw this.gate.refusal(key);
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
    if (options.signal?.aborted) {
      await lease.release().catch(() => undefined);
      options.signal.throwIfAborted();
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

/** Shared by every call that passes no options: nothing to allocate. */
const NO_OPTIONS: AcquireOptions = Object.freeze({});
