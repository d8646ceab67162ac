import type { LockStoreKind } from '../options/lock-module-options.interface.js';
import type { LockStore } from '../stores/lock-store.interface.js';

// By constructor name, so that telemetry does not import (and load) every store implementation.
const KINDS: Record<string, LockStoreKind> = {
  RedisLockStore: 'redis',
  MemoryLockStore: 'memory',
  PostgresLockStore: 'postgres',
  EtcdLockStore: 'etcd',
};

/** The `distributed_lock.store` attribute: the configured kind, or `'custom'` for a store of the user's own. */
export function storeKind(configured: LockStoreKind | LockStore): string {
  if (typeof configured === 'string') return configured;
  return KINDS[configured.constructor?.name ?? ''] ?? 'custom';
}
