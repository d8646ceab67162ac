import type { Redis } from 'ioredis';
import { Mutex, Semaphore, type LockOptions } from 'redis-semaphore';
import { openBenchRedis } from './bench-redis-client.js';
import type { Contender, LockAdapter, RetryTuning } from './lock-adapter.js';

/** redis-semaphore's documented `retryInterval` default, and the tuned value. */
const RETRY_INTERVAL_MS: Record<RetryTuning, number> = { defaults: 10, tuned: 1 };

/** The part of redis-semaphore's lock classes (`Mutex`, `Semaphore`) the bench calls. */
interface RedisSemaphoreLock {
  acquire(): Promise<void>;
  release(): Promise<void>;
}

/**
 * A redis-semaphore lock class as a contender: one connection per instance, a lock object per acquire (its
 * API), the documented or the tuned retry interval, and losses counted instead of thrown from a timer.
 */
function redisSemaphoreLock(
  id: string,
  label: string,
  create: (client: Redis, key: string, options: LockOptions) => RedisSemaphoreLock,
): Contender {
  return {
    id,
    label,
    role: 'alternative',
    packageName: 'redis-semaphore',
    tunings: {
      defaults: `polls every ${RETRY_INTERVAL_MS.defaults} ms (documented default retryInterval)`,
      tuned: `polls every ${RETRY_INTERVAL_MS.tuned} ms (retryInterval: ${RETRY_INTERVAL_MS.tuned})`,
    },
    renewsLeases: true,
    async open(options): Promise<LockAdapter> {
      const client = openBenchRedis(options.redisUrl);
      return {
        async acquire(key) {
          const lock = create(client, options.keyPrefix + key, {
            lockTimeout: options.leaseMs,
            acquireTimeout: options.waitMs,
            retryInterval: RETRY_INTERVAL_MS[options.tuning],
            // The default handler throws from a timer, which would crash the run instead of counting a loss.
            onLockLost: () => options.onLost(key),
          });
          await lock.acquire();
          return { release: () => lock.release() };
        },
        async close() {
          await client.quit();
        },
      };
    },
  };
}

/** redis-semaphore's `Mutex`: SET NX PX polling, Lua release, a refresh timer per held lock. */
export const redisSemaphoreContender = redisSemaphoreLock('redis-semaphore', 'redis-semaphore Mutex', (client, key, options) => new Mutex(client, key, options));

/** redis-semaphore's `Semaphore` of `limit` permits (scenario 9): a sorted set of holders, Lua acquire polled, Lua release. */
export function redisSemaphoreSemaphoreContender(limit: number): Contender {
  return redisSemaphoreLock(
    'redis-semaphore-semaphore',
    `redis-semaphore Semaphore (limit ${limit})`,
    (client, key, options) => new Semaphore(client, key, limit, options),
  );
}
