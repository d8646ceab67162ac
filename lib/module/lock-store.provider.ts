import type { FactoryProvider } from '@nestjs/common';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import type { ResolvedLockOptions } from '../options/lock-module-options.interface.js';
import { LockStore } from '../stores/lock-store.interface.js';
import { storeKindNamed } from '../stores/registry/lock-store-registry.js';

/**
 * Builds the store the options ask for, through its kind in the registry; LockService closes it on
 * shutdown. Async because some stores load their optional drivers (`pg`, `etcd3`) only when chosen.
 */
export const lockStoreProvider: FactoryProvider<LockStore | Promise<LockStore>> = {
  provide: LockStore,
  inject: [RESOLVED_LOCK_OPTIONS],
  useFactory: (options: ResolvedLockOptions): LockStore | Promise<LockStore> => {
    const { store, storeSettings, keyPrefix, commandTimeoutMs, leaseMs } = options;
    if (typeof store === 'object') return store;
    return storeKindNamed(store)!.create(storeSettings, { keyPrefix, commandTimeoutMs, leaseMs });
  },
};
