import type { FactoryProvider } from '@nestjs/common';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import { createEtcdLockStore } from '../stores/etcd/etcd-client.factory.js';
import { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
import { LockStore } from '../stores/lock-store.interface.js';
import { PostgresLockStore } from '../stores/postgres/postgres-lock.store.js';
import { createRedisConnection } from '../stores/redis/connection/redis-client.factory.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import type { ResolvedLockOptions } from './lock-module-options.interface.js';

/**
 * Builds the store the options ask for (the one place that knows which kinds exist); LockService closes it
 * on shutdown. Async because the PostgreSQL and etcd stores load their optional drivers (`pg`, `etcd3`) only
 * when chosen.
 */
export const lockStoreProvider: FactoryProvider<LockStore | Promise<LockStore>> = {
  provide: LockStore,
  inject: [RESOLVED_LOCK_OPTIONS],
  useFactory: (options: ResolvedLockOptions): LockStore | Promise<LockStore> => {
    const { store } = options;
    if (typeof store === 'object') return store;
    if (store === 'memory') return new MemoryLockStore({ keyPrefix: options.keyPrefix });
    if (store === 'postgres') {
      const { postgres, keyPrefix, commandTimeoutMs } = options;
      return PostgresLockStore.create({ connection: postgres!, keyPrefix, commandTimeoutMs });
    }
    if (store === 'etcd') {
      return createEtcdLockStore(options.etcd!, { keyPrefix: options.keyPrefix, commandTimeoutMs: options.commandTimeoutMs });
    }
    const connection = createRedisConnection(options.redis!, {
      shardedPubSub: options.shardedPubSub,
      closeTimeoutMs: options.commandTimeoutMs,
    });
    return new RedisLockStore(connection, {
      keyPrefix: options.keyPrefix,
      commandTimeoutMs: options.commandTimeoutMs,
      replicas: options.replicas,
      fair: options.fair,
    });
  },
};
