import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { parseLockValue } from '../../lib/stores/redis/scripts/lock-value';
import { warmFairScripts } from '../support/fair-scripts';
import { redisUrl, testPrefix } from '../support/test-prefix';

const TIMEOUT_MS = 1_000;

/**
 * A fair waiter keeps one token for its whole wait. A join whose outcome is unknown is cleaned up (leave,
 * then release when the key turns out handed to the token); a retry sent before that clean-up finished
 * may be granted the very grant the clean-up then releases.
 */
describe('fair queue: a join retried after an unknown outcome', () => {
  it('is never reported granted while the clean-up of the timed-out join releases the key behind it', async () => {
    const prefix = testPrefix(__filename);
    const store = new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: TIMEOUT_MS, fair: true });
    const admin = new Redis(redisUrl());
    try {
      await warmFairScripts(store);
      const token = randomUUID();
      // Writes (scripts included) wait in the server; the first join times out, its clean-up and the
      // retry go out behind it, and all run once the pause ends.
      await admin.call('CLIENT', 'PAUSE', String(TIMEOUT_MS * 1.8), 'WRITE');
      const outcome = await store.acquireQueued!({ key: 'k', token, leaseMs: 30_000, holder: 'test', deadline: Date.now() + 20_000 });
      expect(outcome.result.acquired).toBe(true);
      await store.inspect('k');
      const stored = await admin.get(`${prefix}k`);
      expect(stored && parseLockValue(stored)?.token).toBe(token);
      expect(await store.renew([{ key: 'k', token, leaseMs: 30_000 }])).toEqual([true]);
      await store.release('k', token, 0);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      await store.close();
      admin.disconnect();
    }
  });
});
