import { randomUUID } from 'node:crypto';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { sleep } from '../support/clock.js';
import type { Contender, LockAdapter } from './lock-adapter.js';

/** Polling delay while the key is taken, as the raw floor's. */
const POLL_MS = 1;

/**
 * This library's Redis protocol alone: `RedisLockStore.acquire` / `release` called directly, with the
 * connection settings the module uses, and nothing of the client path around them (no LockService, no
 * Lease, no watchdog, no events). Between the raw floor and `lock-service`, it splits what the library
 * costs into the protocol's share (fencing token, lock value, release announcements) and the client
 * path's share.
 */
export const redisStoreContender: Contender = {
  id: 'redis-store',
  label: 'this library’s Redis scripts alone (RedisLockStore)',
  role: 'protocol',
  packageName: 'nestjs-distributed-lock',
  tunings: { tuned: `polls every ${POLL_MS} ms` },
  renewsLeases: false,
  async open(options): Promise<LockAdapter> {
    const store = new RedisLockStore(createRedisConnection(options.redisUrl), { keyPrefix: options.keyPrefix, commandTimeoutMs: 2_000 });
    return {
      async acquire(key) {
        const token = randomUUID();
        const deadline = Date.now() + options.waitMs;
        while (!(await store.acquire(key, token, options.leaseMs, 'bench')).acquired) {
          if (Date.now() >= deadline) throw new Error(`redis-store: ${key} still taken after ${options.waitMs} ms`);
          await sleep(POLL_MS);
        }
        return {
          async release() {
            if (!(await store.release(key, token, 0))) throw new Error(`redis-store: lost ${key} before release`);
          },
        };
      },
      close: () => store.close(),
    };
  },
};
