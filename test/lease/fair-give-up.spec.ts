import { Redis } from 'ioredis';
import { LockNotAcquiredError, LockStoreUnavailableError, type Lease } from '../../lib/index';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

describe('fair: true — a waiter that gives up leaves the queue', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  let holderApp: LockApp;
  let waiterApp: LockApp;

  const until = async (condition: () => Promise<boolean>): Promise<void> => {
    while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
  };

  beforeAll(async () => {
    const open = (holder: string) => createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder });
    [holderApp, waiterApp] = await Promise.all([open('app-0'), open('app-1')]);
  });
  afterAll(async () => {
    await holderApp.close();
    await waiterApp.close();
    redis.disconnect();
  });

  // A plain waiter stands in the key's queue; a semaphore's waiter in the queue of its shaped waiters.
  const WAITERS = [
    ['a plain lock', 'plain', {}, (key: string) => redis.llen(layout.queueKey(layout.lockKey(key)))],
    ['a semaphore', 'permit', { permits: 1 }, (key: string) => redis.llen(layout.queueKey(layout.lockKey(key), 'shaped'))],
  ] as const;

  it.each(WAITERS)('at its deadline, for %s: LockNotAcquiredError, no entry left, and the release that follows hands nothing to it', async (_name, tag, shape, length) => {
    const key = `${tag}:deadline`;
    const held = await holderApp.locks.acquire(key, shape);
    await expect(waiterApp.locks.acquire(key, { ...shape, waitMs: 150 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await length(key)).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect(key)).toBeNull();
  });

  it.each(WAITERS)('on abort, for %s: rejects with the signal’s reason and leaves no entry', async (_name, tag, shape, length) => {
    const key = `${tag}:abort`;
    const held = await holderApp.locks.acquire(key, shape);
    const controller = new AbortController();
    const waiting = waiterApp.locks.acquire(key, { ...shape, waitMs: 60_000, signal: controller.signal });
    await until(async () => (await length(key)) === 1);
    const reason = new Error('the caller went away');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(await length(key)).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect(key)).toBeNull();
  });

  it.each(WAITERS)('at shutdown, for %s: the wait ends with LockStoreUnavailableError and its entry goes', async (_name, tag, shape, length) => {
    const key = `${tag}:shutdown`;
    const leaving = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: 'leaving' });
    const held = await holderApp.locks.acquire(key, shape);
    const waiting = leaving.locks.acquire(key, { ...shape, waitMs: 60_000 });
    await until(async () => (await length(key)) === 1);
    const closed = leaving.close();
    await expect(waiting).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await closed;
    expect(await length(key)).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect(key)).toBeNull();
  });

  it.each(WAITERS)(
    'when an abort races the hand-off, for %s: the waiter’s lease, or handed on to the next in line, never left held',
    async (_name, tag, shape, length) => {
      for (let i = 0; i < 10; i++) {
        const key = `${tag}:race:${i}`;
        const held = await holderApp.locks.acquire(key, shape);
        const controller = new AbortController();
        const waiting = waiterApp.locks.acquire(key, { ...shape, waitMs: 60_000, signal: controller.signal });
        await until(async () => (await length(key)) === 1);
        const next = holderApp.locks.acquire(key, { ...shape, waitMs: 60_000 });
        await until(async () => (await length(key)) === 2);
        const released = held.release();
        controller.abort(new Error('gave up'));
        await released;
        const outcome = await waiting.then(
          (lease: Lease) => lease,
          (error: unknown) => error,
        );
        if (outcome instanceof Error) expect(outcome.message).toBe('gave up');
        else await (outcome as Lease).release();
        // Left before it was handed the key, or handed it and gave it back: either way it went on.
        const lease = await next;
        expect(lease.fencingToken).toBeGreaterThan(held.fencingToken);
        await lease.release();
        expect(await holderApp.store.inspect(key)).toBeNull();
        expect(await length(key)).toBe(0);
      }
    },
  );
});
