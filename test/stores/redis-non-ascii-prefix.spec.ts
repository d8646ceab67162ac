import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { parseLockValue } from '../../lib/stores/redis/scripts/lock-value';
import { redisUrl } from '../support/test-prefix';
import { spinUntil } from '../support/until';

/**
 * The scripts rebuild the queue, channel and counter names from the lock key and the prefix's length.
 * Lua counts bytes, JavaScript UTF-16 units: a keyPrefix with a non-ASCII character (accepted at
 * startup) makes the two disagree.
 */
describe('a keyPrefix with a non-ASCII character', () => {
  const prefix = `tést:${randomBytes(3).toString('hex')}:`;
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  const [a, b] = [0, 1].map(() => new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: 5_000, fair: true }));
  afterAll(async () => {
    await a!.close();
    await b!.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('still hands the key to the queued waiter inside the release', async () => {
    const first = randomUUID();
    const next = randomUUID();
    expect((await a!.acquire('k', first, 30_000, 'test')).acquired).toBe(true);
    const waiting = b!.acquireQueued!({ key: 'k', token: next, leaseMs: 30_000, holder: 'test', deadline: Date.now() + 30_000 });
    await spinUntil(async () => (await redis.llen(layout.queueKey(layout.lockKey('k')))) === 1);
    expect(await a!.release('k', first, 0)).toBe(true);
    const stored = await redis.get(layout.lockKey('k'));
    expect(stored && parseLockValue(stored)?.token).toBe(next);
    expect((await waiting).result.acquired).toBe(true);
  });
});
