import { openBenchRedis } from './bench-redis-client.js';
import { Mutex } from 'redis-semaphore';
import type { Contender, LockAdapter, RetryTuning } from './lock-adapter.js';

/** redis-semaphore's documented `retryInterval` default, and the tuned value. */
const RETRY_INTERVAL_MS: Record<RetryTuning, number> = { defaults: 10, tuned: 1 };

/** redis-semaphore's `Mutex`: SET NX PX polling, Lua release, a refresh timer per held lock. */
export const redisSemaphoreContender: Contender = {
  id: 'redis-semaphore',
  label: 'redis-semaphore Mutex',
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
        const mutex = new Mutex(client, options.keyPrefix + key, {
          lockTimeout: options.leaseMs,
          acquireTimeout: options.waitMs,
          retryInterval: RETRY_INTERVAL_MS[options.tuning],
          // The default handler throws from a timer, which would crash the run instead of counting a loss.
          onLockLost: () => options.onLost(key),
        });
        await mutex.acquire();
        return { release: () => mutex.release() };
      },
      async close() {
        await client.quit();
      },
    };
  },
};
