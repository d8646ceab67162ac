import type { LockStoreKindDefinition } from '../lock-store-kind.interface.js';
import { MemoryLockStore } from './memory-lock.store.js';

/**
 * `store: 'memory'`: this process only (its namespace is the process and `keyPrefix`), for tests and
 * single-instance applications. It reads no options of its own and the runbook cannot reach it.
 */
export const memoryStoreKind: LockStoreKindDefinition<'memory', undefined> = {
  name: 'memory',
  optionNames: [],
  storeClassName: 'MemoryLockStore',
  resolve: () => undefined,
  refuseForeign: () => undefined,
  create: (_settings, { keyPrefix }) => new MemoryLockStore({ keyPrefix }),
};
