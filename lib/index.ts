export { DistributedLockModule, LockModule } from './module/distributed-lock.module.js';
export type { LockModuleOptions, LockStoreKind } from './module/lock-module-options.interface.js';
export { LockService, type AcquireOptions } from './lease/lock.service.js';
export { Lease } from './lease/lease.js';
export { LockStore, InjectLockStore } from './lock.constants.js';
export type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockDenied,
  LockGranted,
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
} from './stores/redis/redis-connection.option.js';
export { MAX_LOCK_KEY_BYTES } from './keys/lock-key.js';
export {
  LockEvents,
  type LockEventMap,
  type LockEventName,
  type LockAcquiredEvent,
  type LockReleasedEvent,
  type LockRenewedEvent,
  type LockRenewFailedEvent,
  type LockLostEvent,
  type LockReleaseFailedEvent,
  type LockContentionEvent,
} from './events/lock-events.js';
export * from './errors/index.js';
export type { TransactionSynchronizer, TransactionOutcome } from './transactions/transaction-synchronizer.interface.js';
export { trackTransaction, trackedTransactions } from './transactions/transaction-scope.js';
export { DistributedLock, type DistributedLockDecorator } from './decorator/distributed-lock.decorator.js';
export type { DistributedLockOptions, LockKeyFunction, OnLockedPolicy } from './decorator/distributed-lock-options.interface.js';
export { encodeKeySegment, type KeySegmentValue } from './keys/key-segment.encoding.js';
export { LockNotAcquiredFilter, type LockConflictBody } from './interception/lock-not-acquired.filter.js';
export { RedisLockRunbook } from './runbook/redis-lock.runbook.js';
export { LockRunbook, type RunbookLock, type RunbookForceRelease } from './runbook/lock-runbook.js';
