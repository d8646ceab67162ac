import type { EtcdConnectionOption } from '../stores/etcd/etcd-connection-option.js';
import type { LockTelemetryOptions, ResolvedTelemetryOptions } from '../observability/lock-telemetry.options.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { PostgresConnectionOption } from '../stores/postgres/postgres-connection.interface.js';
import type { RedisConnectionOption } from '../stores/redis/connection/redis-connection.option.js';
import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';

/** Which lease store backs the module. */
export type LockStoreKind = 'redis' | 'memory' | 'postgres' | 'etcd';

/** Options of `DistributedLockModule.forRoot` / `forRootAsync`. Durations are milliseconds. */
export interface LockModuleOptions {
  /**
   * Where the locks live: a URL (`redis://`, `rediss://` for TLS, user and password for ACL), ioredis
   * options (Sentinel: `{ sentinels, name }`), `{ url, ...ioredis options }`, a Redis Cluster as
   * `{ cluster: [seed nodes], ...ioredis Cluster options }`, or an ioredis `Redis`/`Cluster` instance to
   * reuse (the module then never closes it). Required when `store` is `'redis'`, so a missing environment
   * variable fails at startup instead of silently locking on localhost. See docs/topologies.md.
   */
  redis?: RedisConnectionOption;
  /**
   * The PostgreSQL database for `store: 'postgres'`: a `postgres://` URL, node-postgres pool settings, or a
   * `pg.Pool` to reuse (the module then never ends it). Leases go to the table `distributed_locks`, created
   * on first use; construct a `PostgresLockStore` yourself for another schema or table. Requires `pg`.
   */
  postgres?: PostgresConnectionOption;
  /**
   * Where the locks live with `store: 'etcd'`: a client URL, the list of every member's URL, `etcd3` client
   * options, or an `Etcd3` client to reuse (never closed by the module). Requires the `etcd3` package.
   * Required when `store` is `'etcd'`; see docs/etcd.md for what it guarantees and how `leaseMs` maps to
   * etcd's whole-second leases.
   */
  etcd?: EtcdConnectionOption;
  /**
   * Redis only: how many replicas must acknowledge each grant and renewal (`WAIT`) before it counts. A grant
   * not acknowledged within half of `commandTimeoutMs` is released and the acquisition retried (within
   * `waitMs`), so a failover to an acknowledging replica cannot lose it. Costs a replica round trip per
   * grant and renewal; with fewer than this many replicas reachable, locks fail closed.
   * @default 0
   */
  replicas?: number;
  /**
   * Redis only: waiters queue in Redis, first come first served across every instance. A release hands the
   * key to the next waiter in the same step (with its fencing token) and wakes only that waiter, so a hot
   * key passes from instance to instance in turn, with no herd and nobody starved. Without it, every
   * instance's first waiter is woken by a release and they race for the key (fair within one instance
   * only). Costs an uncontended acquisition one more command inside Redis; see docs/performance.md.
   * Not combinable with `replicas` yet.
   * @default false
   */
  fair?: boolean;
  /**
   * Redis 7 only: wake waiters over sharded pub/sub (SSUBSCRIBE / SPUBLISH), so on a Cluster a release is
   * announced on its own shard instead of broadcast to every node.
   * @default false
   */
  shardedPubSub?: boolean;
  /**
   * Where leases live: `'redis'` (see `redis`); `'postgres'`, a lease table (see `postgres`); `'etcd'`, an
   * etcd cluster (consensus: unavailable rather than two holders; see `etcd`); `'memory'`, this process
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
   * Fallback retry delays while waiting, used in case a release notification is missed: exponential from
   * `retryMinDelayMs` to `retryMaxDelayMs`, with full jitter. Waiters are normally woken by the release.
   * @default 10
   */
  retryMinDelayMs?: number;
  /** @default 1000 */
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
  readonly redis: RedisConnectionOption | undefined;
  readonly postgres: PostgresConnectionOption | undefined;
  readonly etcd: EtcdConnectionOption | undefined;
  readonly replicas: number;
  readonly fair: boolean;
  readonly shardedPubSub: boolean;
  readonly store: LockStoreKind | LockStore;
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
