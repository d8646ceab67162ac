import type { LockStore } from '../stores/lock-store.interface.js';
import { storeKindOfInstance, type LockStoreKind } from '../stores/registry/lock-store-registry.js';

/** The `distributed_lock.store` attribute: the configured kind, or `'custom'` for a store of the user's own. */
export function storeAttribute(configured: LockStoreKind | LockStore): string {
  if (typeof configured === 'string') return configured;
  return storeKindOfInstance(configured) ?? 'custom';
}
