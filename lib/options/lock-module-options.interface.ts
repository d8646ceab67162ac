import type { LockStore } from '../stores/lock-store.interface.js';
import type { LockStoreKind, StoreModuleOptions } from '../stores/registry/lock-store-registry.js';
import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';
import type { LockTelemetryOptions, ResolvedTelemetryOptions } from './lock-telemetry.options.js';

export type { LockStoreKind } from '../stores/registry/lock-store-registry.js';

/**
 * Options of `DistributedLockModule.forRoot` / `forRootAsync`. Durations are milliseconds. The options of
 * each store (its connection: `redis`, `postgres`, `etcd`, `zookeeper`, `redlock`; Redis' `replicas`, `fair`, `shardedPubSub`) are
 * declared by the store's kind (see stores/registry/).
 */
export interface LockModuleOptions extends StoreModuleOptions {
  /**
   * Where leases live: `'redis'` (see `redis`); `'postgres'`, a lease table (see `postgres`); `'etcd'`, an
   * etcd cluster (consensus: unavailable rather than two holders; see `etcd`); `'zookeeper'`, a ZooKeeper
   * ensemble (the same, with the session as the lease; see `zookeeper`); `'redlock'`, a majority of
   * independent Redis masters (see `redlock` and docs/redlock.md); `'memory'`, this process
   * only (its namespace is the process and `keyPrefix`), for tests and single-instance apps. A `LockStore`
   * instance is used as it is, and closed at shutdown.
   * @default 'redis'
   */
  store?: LockStoreKind | LockStore;
  /**
   * Prepended to every lock key in Redis. Must not contain `{` or `}`: hash tags come from the keys.
   * @default 'lock:'
   */
  keyPrefix?: string;
  /**
   * Lease length: how long a crashed holder can block others. Renewed while the holder is alive.
   * @default 30000
   */
  leaseMs?: number;
  /**
   * How long `acquire` waits for a held key before throwing `LockNotAcquiredError`; 0 means one attempt.
   * For several keys at once (`keys`, `withLocks`, `acquire` of a list) it bounds the whole acquisition.
   * @default 5000
   */
  waitMs?: number;
  /**
   * How often the watchdog renews a held lease. Capped at half the lease of each acquisition.
   * @default leaseMs / 3
   */
  renewIntervalMs?: number;
  /**
   * How long one store command may take before its outcome counts as unknown (and is cleaned up).
   * @default 2000
   */
  commandTimeoutMs?: number;
  /**
   * Fallback retry delays while waiting. Waiters are woken by the release notification; while subscribed
   * to it (or the subscription's confirmation, after which the waiter looks at once, is still on its way),
   * a waiter also looks again every `retryMaxDelayMs` or so (half to all of it, jittered), a safety net
   * for a missed notification. While the subscription is refused and while store errors are retried, the
   * delays grow exponentially from `retryMinDelayMs` to `retryMaxDelayMs`, with full jitter.
   * @default 10
   */
  retryMinDelayMs?: number;
  /**
   * See `retryMinDelayMs`: the longest fallback delay, and the safety-net interval of a subscribed waiter.
   * @default 1000
   */
  retryMaxDelayMs?: number;
  /**
   * Names this instance as holder in the store, for the runbook's listing.
   * @default `${hostname}:${pid}`
   */
  holder?: string;
  /**
   * Tells locks whether they run inside a database transaction, so their release waits for its commit or
   * rollback. The default knows transactions marked by `trackTransaction`, which is what the
   * `nestjs-distributed-lock/transactional` integration for `@nestjs-cls/transactional` uses.
   * @default trackedTransactions
   */
  transactionSynchronizer?: TransactionSynchronizer;
  /**
   * On shutdown, how long locked calls still running may take to finish before their leases are given up
   * (their signal aborts, a pending transaction rolls back) and released.
   * @default 5000
   */
  shutdownGraceMs?: number;
  /**
   * OpenTelemetry metrics (and, with `{ spans: true }`, spans) for this application's locks, through
   * `@opentelemetry/api` (an optional peer, loaded only when this is on; a no-op until an SDK is registered).
   * See docs/observability.md for every instrument. Events and diagnostics channels need no option.
   * @default false
   */
  openTelemetry?: boolean | LockTelemetryOptions;
}

/** {@link LockModuleOptions} after defaults and validation. */
export interface ResolvedLockOptions {
  readonly store: LockStoreKind | LockStore;
  /** What the chosen store kind made of the options it reads (undefined for a store instance). */
  readonly storeSettings: unknown;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly renewIntervalMs: number | undefined;
  readonly commandTimeoutMs: number;
  readonly retryMinDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly holder: string;
  readonly transactionSynchronizer: TransactionSynchronizer;
  readonly shutdownGraceMs: number;
  readonly openTelemetry: ResolvedTelemetryOptions | undefined;
}
