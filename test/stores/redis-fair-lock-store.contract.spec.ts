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

  it('hands the key over to the next waiter of another store, whose local deadline errs early, and its watchdog then extends it', async () => {
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
    // The key's expiry on the server's clock, which is this machine's: a PTTL counted from a local reading
    // taken before it was sent would put the store's deadline early by that round trip.
    const storeDeadline = Number(await redis.call('PEXPIRETIME', `${prefix}handed`));
    expect(outcome.result.acquired).toBe(true);
    // The local deadline errs early, however the waiter learnt of the hand-off: by its message, one
    // heartbeat from a moment it knew it still queued; by a look that found it, the lease from that look
    // (which the look made the store keep).
    if (outcome.grantedTtlMs !== undefined) {
      expect(outcome.grantedTtlMs).toBeLessThanOrEqual(2_000);
      expect(outcome.leaseStartedAt).toBeLessThanOrEqual(beforeRelease);
    }
    expect(outcome.leaseStartedAt + (outcome.grantedTtlMs ?? next.leaseMs)).toBeLessThanOrEqual(storeDeadline);
    expect(await b.renew([{ key: 'handed', token: next.token, leaseMs: 10_000 }])).toEqual([true]);
    expect((await b.inspect('handed'))!.ttlMs).toBeGreaterThan(5_000);
    expect(await b.release('handed', next.token, 0)).toBe(true);
  });

  it('takes away a queued writer’s mark however it joins, so the readers ahead of it in line get in', async () => {
    const writer = randomUUID();
    expect((await a.acquireShared!('marked', { mode: 'write' }, writer, 10_000, 'test')).acquired).toBe(true);
    // B finds the key queued (its reader joins the line), so its next join could be a plain RPUSHX.
    const reader = request('marked', 30_000);
    const readerWaits = b.acquireSharedQueued!(reader, { mode: 'read' });
    const layout = new RedisKeyLayout(prefix);
    const queueKey = layout.queueKey(`${prefix}marked`, 'shaped');
    while ((await redis.llen(queueKey)) === 0) await new Promise((resolve) => setImmediate(resolve));
    // A second writer's first attempt, turned away, left its mark (it keeps new readers out)...
    const second = request('marked', 30_000);
    expect((await b.acquireShared!('marked', { mode: 'write', waitingMs: 60_000 }, second.token, 10_000, 'test')).acquired).toBe(false);
    expect(await redis.hexists(`${prefix}marked`, `~${second.token}`)).toBe(1);
    // ...and then it joins the line, behind the reader: its place keeps readers out from now on, not its mark.
    const controller = new AbortController();
    const secondWaits = b.acquireSharedQueued!({ ...second, signal: controller.signal }, { mode: 'write' }).catch((error: unknown) => error);
    while ((await redis.llen(queueKey)) < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(await redis.hexists(`${prefix}marked`, `~${second.token}`)).toBe(0);
    expect(await a.release('marked', writer, 0)).toBe(true);
    expect((await readerWaits).result.acquired).toBe(true);
    controller.abort(new Error('done'));
    await secondWaits;
    expect(await b.release('marked', reader.token, 0)).toBe(true);
  });

  it('refuses a token with the lock value separator in it', async () => {
    await expect(a.acquire('bad', 'a|b', 10_000, 'test')).rejects.toThrow(/must not contain "\|"/);
    await expect(a.acquireQueued!({ ...request('bad', 1_000), token: 'a|b' })).rejects.toThrow(/must not contain "\|"/);
  });
});
