import type { FactoryProvider } from '@nestjs/common';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
import { LockStore } from '../stores/lock-store.interface.js';
import { createRedisConnection } from '../stores/redis/redis-client.factory.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import type { ResolvedLockOptions } from './lock-module-options.interface.js';

/** Builds the store the options ask for (the one place that knows which kinds exist); LockService closes it on shutdown. */
export const lockStoreProvider: FactoryProvider<LockStore> = {
  provide: LockStore,
  inject: [RESOLVED_LOCK_OPTIONS],
  useFactory: (options: ResolvedLockOptions): LockStore => {
    const { store } = options;
    if (typeof store === 'object') return store;
    if (store === 'memory') return new MemoryLockStore({ keyPrefix: options.keyPrefix });
    const connection = createRedisConnection(options.redis!, {
      shardedPubSub: options.shardedPubSub,
      closeTimeoutMs: options.commandTimeoutMs,
    });
    return new RedisLockStore(connection, {
      keyPrefix: options.keyPrefix,
      commandTimeoutMs: options.commandTimeoutMs,
      replicas: options.replicas,
    });
  },
};
