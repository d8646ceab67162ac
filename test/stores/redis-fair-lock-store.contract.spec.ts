import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { describeLockStoreContract } from './lock-store.contract';
import { describeSharedLockStoreContract } from './shared-lock-store.contract';

const fairStore = (keyPrefix: string) => new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix, commandTimeoutMs: 5_000, fair: true });

describeLockStoreContract('RedisLockStore with fair: true', async () => ({ store: fairStore(testPrefix(__filename)) }));

// Its single attempts of a shape that queues (permits) serve the shaped waiters' queue first: the same contract.
describeSharedLockStoreContract('RedisLockStore with fair: true', async () => ({ store: fairStore(testPrefix(__filename)) }));

describe('RedisLockStore with fair: true, its queue', () => {
  const prefix = testPrefix(__filename);
  const [a, b] = [fairStore(prefix), fairStore(prefix)];
  const redis = new Redis(redisUrl());
  afterAll(async () => {
    await a.close();
    await b.close();
    redis.disconnect();
  });
  const request = (key: string, waitMs: number, signal?: AbortSignal) => ({
    key,
    token: randomUUID(),
    leaseMs: 10_000,
    holder: 'test',
    deadline: Date.now() + waitMs,
    signal,
  });

  it('grants a free key at once, for the whole lease, counting the lease from when the call was sent', async () => {
    const sentAt = Date.now();
    const outcome = await a.acquireQueued!(request('free', 5_000));
    expect(outcome.result.acquired).toBe(true);
    expect(outcome.attempts).toBe(1);
    expect(outcome.leaseStartedAt).toBeGreaterThanOrEqual(sentAt);
    expect(outcome.grantedTtlMs).toBeUndefined();
  });

  it('hands the key over to the next waiter of another store, with a short first TTL its watchdog then extends', async () => {
    const first = request('handed', 5_000);
    await a.acquireQueued!(first);
    const next = request('handed', 30_000);
    const waiting = b.acquireQueued!(next);
    // Queued: a single attempt (waitMs 0) is turned away now, even from the store holding nothing.
    const queueKey = new RedisKeyLayout(prefix).queueKey(`${prefix}handed`);
    while ((await redis.llen(queueKey)) === 0) await new Promise((resolve) => setImmediate(resolve));
    expect((await b.acquire('handed', randomUUID(), 10_000, 'test')).acquired).toBe(false);
    const beforeRelease = Date.now();
    expect(await a.release('handed', first.token, 0)).toBe(true);
    const outcome = await waiting;
    expect(outcome.result.acquired).toBe(true);
    expect(outcome.grantedTtlMs).toBeLessThanOrEqual(2_000);
    // The local deadline errs early: counted from a moment the waiter knew it was still queued.
    expect(outcome.leaseStartedAt).toBeLessThanOrEqual(beforeRelease);
    expect(await b.renew([{ key: 'handed', token: next.token, leaseMs: 10_000 }])).toEqual([true]);
    expect((await b.inspect('handed'))!.ttlMs).toBeGreaterThan(5_000);
    expect(await b.release('handed', next.token, 0)).toBe(true);
  });

  it('refuses a token with the lock value separator in it', async () => {
    await expect(a.acquire('bad', 'a|b', 10_000, 'test')).rejects.toThrow(/must not contain "\|"/);
    await expect(a.acquireQueued!({ ...request('bad', 1_000), token: 'a|b' })).rejects.toThrow(/must not contain "\|"/);
  });
});
