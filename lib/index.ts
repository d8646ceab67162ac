export { DistributedLockModule, LockModule } from './module/distributed-lock.module.js';
export type { LockModuleOptions, LockStoreKind } from './options/lock-module-options.interface.js';
export type { LockModuleOptionsFactory } from './options/lock-module-options-factory.interface.js';
export { LockService, type AcquireOptions, type LockHealth } from './service/lock.service.js';
export type { WatchdogStatus } from './watchdog/lease.watchdog.js';
export { Lease } from './lease/lease.js';
export { LeaseSet } from './lease/lease-set.js';
export { LockStore, InjectLockStore } from './lock.constants.js';
export type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockDenied,
  LockGranted,
  LockShape,
  LockShapeName,
  PrefixCount,
  PrefixSurvey,
  PrefixSurveyLimits,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from './stores/lock-store.interface.js';
export { MemoryLockStore, type MemoryLockStoreOptions } from './stores/memory/memory-lock.store.js';
export type {
  RedisConnectionOption,
  RedisClusterConnectionOptions,
  RedisClusterSeed,
  RedisUrlConnectionOptions,
} from './stores/redis/connection/redis-connection.option.js';
export { PostgresLockStore } from './stores/postgres/postgres-lock.store.js';
export type { PostgresLockStoreOptions, PostgresSweepOptions } from './stores/postgres/postgres-lock-store.options.js';
export type {
  PostgresConnectionOption,
  PostgresPool,
  PostgresPoolClient,
  PostgresPoolConfig,
  PostgresQueryResult,
} from './stores/postgres/postgres-connection.interface.js';
export type { PostgresLockTableOptions } from './stores/postgres/postgres-lock-table.js';
export type { SqlStatement } from './stores/postgres/postgres-lock.queries.js';
export { postgresLockMigration } from './stores/postgres/postgres-lock.migration.js';
export { assertLeaseHeld, type LeaseCheckQueryable } from './stores/postgres/postgres-lease.check.js';
export type { EtcdClientLike, EtcdClientOptions, EtcdConnectionOption } from './stores/etcd/etcd-connection-option.js';
export type { ZookeeperConnectionOption } from './stores/zookeeper/zookeeper-connection-option.js';
export type { RedlockConnectionOption, RedlockMaster } from './stores/redlock/redlock-masters.option.js';
export { MAX_LOCK_KEY_BYTES } from './keys/lock-key.js';
export { LockEvents } from './events/lock-events.js';
export {
  LOCK_EVENT_NAMES,
  type LockEventMap,
  type LockEventName,
  type LockLeaseEvent,
  type LockAcquisitionEvent,
  type LockWakeUps,
  type LockAcquiredEvent,
  type LockNotAcquiredEvent,
  type LockNotAcquiredReason,
  type LockStoreUnavailableEvent,
  type LockReleasedEvent,
  type LockRenewedEvent,
  type LockRenewFailedEvent,
  type LockLostEvent,
  type LockReleaseFailedEvent,
  type LockDeferredEvent,
  type LockContentionEvent,
} from './events/lock-event.types.js';
export { LOCK_CHANNEL_PREFIX, lockEventChannelName } from './events/lock-event.channels.js';
export type { LockTelemetryOptions, LockMeterProvider, LockTracerProvider } from './options/lock-telemetry.options.js';
export * from './errors/index.js';
export type { FencedBy } from './fencing/fenced-by.js';
export { fencedWrite, type FencedWrite } from './fencing/fenced-write.js';
export { fencedSqlUpdate, type FencedSqlUpdate, type SqlQueryable } from './fencing/fenced-sql-update.js';
export {
  onStaleFencingToken,
  STALE_FENCING_TOKEN_CHANNEL,
  type StaleFencingTokenEvent,
} from './fencing/stale-fencing-token.channel.js';
export type { TransactionSynchronizer, TransactionOutcome } from './transactions/transaction-synchronizer.interface.js';
export { trackTransaction, trackedTransactions, type TrackTransactionOptions } from './transactions/transaction-scope.js';
export { assertLeasesHeld } from './transactions/held-leases.js';
export { DistributedLock, type DistributedLockDecorator } from './method-lock/distributed-lock.decorator.js';
export type {
  DistributedLockOptions,
  LockedMethodOptions,
  LockKeyFunction,
  LockKeysFunction,
  MultiKeyLockOptions,
  OnLockedPolicy,
  SingleKeyLockOptions,
} from './method-lock/distributed-lock-options.interface.js';
export { encodeKeySegment, type KeySegmentValue } from './keys/key-segment.encoding.js';
export { LockErrorFilter, LockNotAcquiredFilter } from './http/lock-error.filter.js';
export { lockErrorResponse, type LockErrorBody, type LockConflictBody, type LockErrorResponse } from './http/lock-error.responses.js';
export { RedisLockRunbook } from './runbook/redis-lock.runbook.js';
export { LockRunbook, type RunbookLock, type RunbookForceRelease } from './runbook/lock-runbook.js';
