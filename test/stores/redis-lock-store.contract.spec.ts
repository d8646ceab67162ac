import { Redis } from 'ioredis';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { describeLockStoreContract } from './lock-store.contract';
import { describeSharedLockStoreContract } from './shared-lock-store.contract';

describeLockStoreContract('RedisLockStore', async () => ({
  store: new RedisLockStore(createRedisConnection(redisUrl()), {
    keyPrefix: testPrefix(__filename),
    commandTimeoutMs: 5_000,
  }),
}));

describeSharedLockStoreContract('RedisLockStore', async () => ({
  store: new RedisLockStore(createRedisConnection(redisUrl()), {
    keyPrefix: testPrefix(__filename),
    commandTimeoutMs: 5_000,
  }),
}));

describe('RedisLockStore next to foreign data', () => {
  it('treats a non-lock value at a lock key as not ours, without failing the rest of a renew batch', async () => {
    const prefix = testPrefix(__filename);
    const store = new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    const redis = new Redis(redisUrl());
    try {
      await store.acquire('mine', 'token-1', 10_000, 'test');
      await redis.set(`${prefix}overwritten`, 'an operator wrote a string here');
      expect(
        await store.renew([
          { key: 'overwritten', token: 'token-2', leaseMs: 10_000 },
          { key: 'mine', token: 'token-1', leaseMs: 10_000 },
        ]),
      ).toEqual([false, true]);
      expect(await store.release('overwritten', 'token-2', 0)).toBe(false);
      expect(await redis.get(`${prefix}overwritten`)).toBe('an operator wrote a string here');
    } finally {
      await store.close();
      redis.disconnect();
    }
  });
});
