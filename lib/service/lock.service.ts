import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LeaseAcquirer } from '../acquisition/lease-acquirer.js';
import { LocalFifo } from '../acquisition/local-fifo.js';
import { ShutdownGate } from '../acquisition/shutdown-gate.js';
import { LockReentryError } from '../errors/lock-reentry.error.js';
import { LockEvents } from '../events/lock-events.js';
import { LeaseContext } from '../lease/lease-context.js';
import type { LeaseHost } from '../lease/lease-host.interface.js';
import { LeaseSet } from '../lease/lease-set.js';
import type { Lease } from '../lease/lease.js';
import { lockOrder } from '../keys/lock-order.js';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import type { AcquireOptions } from '../options/acquire-options.interface.js';
import type { ResolvedLockOptions } from '../options/lock-module-options.interface.js';
import { InjectLockStore, type LockStore } from '../stores/lock-store.interface.js';
import { registerHeldLeaseCheck } from '../transactions/held-leases.js';
import { LeaseDeferral } from '../transactions/lease-deferral.js';
import { TransactionOwnedLeases } from '../transactions/transaction-owned-leases.js';
import { LeaseWatchdog, type WatchdogStatus } from '../watchdog/lease.watchdog.js';
import { acquireKeys } from './lease-set.acquisition.js';
import { LeaseSetScopes } from './lease-set.scope.js';
import { LeaseScopes } from './lease.scope.js';
import { reentryRefusal, ShapedLeases } from './shaped-leases.js';
import { asksForShape } from '../options/lock-shape.option.js';
import { LockConfigError } from '../errors/lock-config.error.js';
import type { LockShape } from '../stores/lock-shape.js';

export type { AcquireOptions } from '../options/acquire-options.interface.js';

/** What {@link LockService.checkHealth} reports. */
export interface LockHealth {
  readonly storeRoundTripMs: number;
  readonly watchdog: WatchdogStatus;
  readonly shuttingDown: boolean;
}

/**
 * Takes and releases cluster-wide leases. One instance per application: it owns the application's leases
 * and, on shutdown, drains and releases them and closes the store.
 */
@Injectable()
export class LockService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DistributedLock');
  private readonly held = new Set<Lease>();
  private readonly gate = new ShutdownGate(() => this.held.size);
  private readonly owned: TransactionOwnedLeases;
  private readonly deferral: LeaseDeferral;
  private readonly context: LeaseContext;
  private readonly acquirer: LeaseAcquirer;
  private readonly scopes: LeaseScopes;
  private readonly shaped: ShapedLeases;
  private readonly sets: LeaseSetScopes;
  private unregisterLeaseCheck?: () => void;

  constructor(
    @Inject(RESOLVED_LOCK_OPTIONS) private readonly options: ResolvedLockOptions,
    @InjectLockStore() private readonly store: LockStore,
    private readonly watchdog: LeaseWatchdog,
    events: LockEvents,
  ) {
    this.owned = new TransactionOwnedLeases(options.transactionSynchronizer);
    this.deferral = new LeaseDeferral(options.transactionSynchronizer, this.owned, events);
    this.context = new LeaseContext(this.deferral);
    const host: LeaseHost = {
      store,
      watchdog,
      events,
      context: this.context,
      transactions: this.deferral,
      renewIntervalMs: options.renewIntervalMs,
      settled: (lease) => {
        this.held.delete(lease);
        this.gate.changed();
      },
    };
    const acquirerContext = {
      options,
      store,
      events,
      watchdog,
      gate: this.gate,
      waiting: { store, events, options, waiters: new LocalFifo() },
      host,
      held: this.held,
      assertNotHeldHere: (key: string) => this.assertNotHeldHere(key, undefined),
    };
    this.acquirer = new LeaseAcquirer(acquirerContext);
    this.shaped = new ShapedLeases(acquirerContext, (key, shape) => this.assertNotHeldHere(key, shape));
    this.scopes = new LeaseScopes({
      context: this.context,
      deferral: this.deferral,
      owned: this.owned,
      isTransactionActive: () => options.transactionSynchronizer.isTransactionActive(),
      acquireForScope: (key, acquireOptions) => this.acquireForScope(key, acquireOptions),
      shapeOf: (lease) => this.shaped.shapeOf(lease),
    });
    this.sets = new LeaseSetScopes({
      context: this.context,
      deferral: this.deferral,
      owned: this.owned,
      isTransactionActive: () => options.transactionSynchronizer.isTransactionActive(),
      acquireKey: (key, acquireOptions, waitMs) => this.acquirer.acquire(key, acquireOptions, waitMs, 'scope') as Promise<Lease>,
      waitMs: (acquireOptions) => acquireOptions.waitMs ?? options.waitMs,
      assertJoinable: (key, lease) => {
        const refusal = reentryRefusal(key, this.shaped.shapeOf(lease), undefined);
        if (refusal) throw refusal;
      },
    });
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

  /**
   * Once the application has started: one look at the store, so that a store unreachable at startup is in
   * the log at once (the application still starts: locked calls fail closed until the store answers).
   */
  onApplicationBootstrap(): void {
    const { commandTimeoutMs } = this.options;
    this.store.ping().catch((error: unknown) => {
      if (this.gate.closed) return;
      this.logger.warn(
        `Lock store unreachable at startup (${error instanceof Error ? error.message : String(error)}): locked calls fail ` +
          `closed with LockStoreUnavailableError (HTTP 503) until it answers (each waits at most commandTimeoutMs = ${commandTimeoutMs} ms).`,
      );
    });
  }

  /** Waits up to `waitMs` for the key; throws `LockNotAcquiredError` if it stays taken. */
  acquire(key: string, options?: AcquireOptions): Promise<Lease>;
  /**
   * All or nothing: every key of the list (duplicates collapsed), taken in one global order whatever order
   * they are named in, each with its own lease and fencing token, within `waitMs` for the whole list. If
   * one stays taken, those already taken are given back and the call throws `LockNotAcquiredError` naming it.
   */
  acquire(keys: readonly string[], options?: AcquireOptions): Promise<LeaseSet>;
  acquire(key: string | readonly string[], options: AcquireOptions = NO_OPTIONS): Promise<Lease | LeaseSet> {
    if (isKeyList(key)) return this.acquireSet(key, options, 'acquire') as Promise<LeaseSet>;
    if (asksForShape(options)) return this.shaped.acquire(key, options, options.waitMs ?? this.options.waitMs, 'acquire') as Promise<Lease>;
    return this.acquirer.acquire(key, options, options.waitMs ?? this.options.waitMs, 'acquire') as Promise<Lease>;
  }

  /** One attempt: the lease, or null if the key is taken. */
  tryAcquire(key: string, options?: Omit<AcquireOptions, 'waitMs'>): Promise<Lease | null>;
  /** One attempt per key, all or nothing: the set, or null (nothing kept) if any key is taken. */
  tryAcquire(keys: readonly string[], options?: Omit<AcquireOptions, 'waitMs'>): Promise<LeaseSet | null>;
  tryAcquire(key: string | readonly string[], options: Omit<AcquireOptions, 'waitMs'> = NO_OPTIONS): Promise<Lease | LeaseSet | null> {
    if (isKeyList(key)) return this.acquireSet(key, options, 'try');
    if (asksForShape(options)) return this.shaped.acquire(key, options, 0, 'try');
    return this.acquirer.acquire(key, options, 0, 'try');
  }

  /**
   * Several keys through the single-key acquisition (see `acquireKeys`), every one checked against the call
   * chain and its transaction before any is taken.
   */
  private async acquireSet(keys: readonly string[], options: AcquireOptions, kind: 'try' | 'acquire'): Promise<LeaseSet | null> {
    refuseShapeOfList(options);
    const ordered = lockOrder(keys);
    for (const key of ordered) this.assertNotHeldHere(key, undefined);
    const waitMs = kind === 'try' ? 0 : (options.waitMs ?? this.options.waitMs);
    const perKey = kind === 'try' ? 'try' : 'scope';
    const got = await acquireKeys(ordered, waitMs, (key, remainingMs) => this.acquirer.acquire(key, options, remainingMs, perKey));
    return got && new LeaseSet(got.taken);
  }

  /** The lease of a scope (`withLock`, locked methods), whose caller looked for the key in its chain already. */
  private acquireForScope(key: string, options: AcquireOptions): Promise<Lease> {
    if (asksForShape(options)) return this.shaped.acquire(key, options, options.waitMs ?? this.options.waitMs, 'scope') as Promise<Lease>;
    return this.acquirer.acquire(key, options, options.waitMs ?? this.options.waitMs, 'scope') as Promise<Lease>;
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
  withLock<T>(
    key: string,
    optionsOrFn: AcquireOptions | ((lease: Lease) => Promise<T> | T),
    maybeFn?: (lease: Lease) => Promise<T> | T,
  ): Promise<T> {
    const options = typeof optionsOrFn === 'function' ? NO_OPTIONS : optionsOrFn;
    const fn = typeof optionsOrFn === 'function' ? optionsOrFn : maybeFn!;
    // LeaseScopes.run never throws: whatever it refuses reaches the caller as a rejection.
    return this.scopes.run(key, options, fn);
  }

  /**
   * Runs `fn` holding every key of the list, all or nothing (see `acquire` of a list), and always releases
   * them all — after the surrounding transaction completes, as `withLock` does. Re-entry, `minHoldMs` and
   * business errors behave as in `withLock`; the loss of any one lease ends the call in its `LeaseLostError`.
   */
  withLocks<T>(keys: readonly string[], fn: (leases: LeaseSet) => Promise<T> | T): Promise<T>;
  withLocks<T>(keys: readonly string[], options: AcquireOptions, fn: (leases: LeaseSet) => Promise<T> | T): Promise<T>;
  async withLocks<T>(
    keys: readonly string[],
    optionsOrFn: AcquireOptions | ((leases: LeaseSet) => Promise<T> | T),
    maybeFn?: (leases: LeaseSet) => Promise<T> | T,
  ): Promise<T> {
    const options = typeof optionsOrFn === 'function' ? NO_OPTIONS : optionsOrFn;
    const fn = typeof optionsOrFn === 'function' ? optionsOrFn : maybeFn!;
    refuseShapeOfList(options);
    return this.sets.run(lockOrder(keys), options, fn);
  }

  /**
   * @internal For the explorer, when it binds a locked method at startup: `LockConfigError` naming the
   * shape and the store when the method asks for `mode` or `permits` and the store does not offer them.
   */
  assertShapeOffered(shape: LockShape, where: string): void {
    this.shaped.assertOffered(shape, where);
  }

  /** The lease of the innermost locked scope (`withLock` or a locked method) running in this call chain. */
  current(): Lease | undefined {
    return this.context.current();
  }

  /** The lease set of the innermost multi-key scope (`withLocks`, a method locked on `keys`) running in this call chain. */
  currentLeaseSet(): LeaseSet | undefined {
    return this.sets.current();
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
    try {
      await this.store.close();
    } finally {
      // Last: nothing runs under this service's scopes any more (a scope past the grace period lost its lease).
      this.context.dispose();
      this.sets.dispose();
    }
  }

  /**
   * A manual `acquire` of a key this call chain or its transaction already holds could only wait for
   * itself until `waitMs`: it fails at once instead (`withLock` and locked methods join those leases).
   */
  private assertNotHeldHere(key: string, shape: LockShape | undefined): void {
    const holder = this.context.holding(key);
    if (holder) throw reentryRefusal(key, this.shaped.shapeOf(holder.lease), shape) ?? new LockReentryError(key);
    if (this.options.transactionSynchronizer.isTransactionActive() && this.owned.frameFor(key)) {
      throw new LockReentryError(key, 'transaction');
    }
  }
}

/** Read/write locks and semaphores are one key each: a list asking for one is refused, never half-honoured. */
function refuseShapeOfList(options: AcquireOptions): void {
  if (!asksForShape(options)) return;
  const option = options.mode === undefined ? 'permits' : 'mode';
  throw new LockConfigError(option, options[option], 'a single key: read/write locks and semaphores do not take a list of keys');
}

/** A list of keys (several at once); anything else goes the single-key way, which says what is wrong with it. */
function isKeyList(key: string | readonly string[]): key is readonly string[] {
  return typeof key !== 'string' && Array.isArray(key);
}

/** Shared by every call that passes no options: nothing to allocate. */
const NO_OPTIONS: AcquireOptions = Object.freeze({});
