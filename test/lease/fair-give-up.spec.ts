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

  const queueLength = (key: string) => redis.llen(layout.queueKey(layout.lockKey(key)));
  const permitQueueLength = (key: string) => redis.llen(layout.sharedQueueKey(layout.lockKey(key)));
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

  it('at its deadline: LockNotAcquiredError, no entry left, and the release that follows hands nothing to it', async () => {
    const held = await holderApp.locks.acquire('deadline');
    await expect(waiterApp.locks.acquire('deadline', { waitMs: 150 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await queueLength('deadline')).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect('deadline')).toBeNull();
  });

  it('on abort: rejects with the signal’s reason and leaves no entry', async () => {
    const held = await holderApp.locks.acquire('abort');
    const controller = new AbortController();
    const waiting = waiterApp.locks.acquire('abort', { waitMs: 60_000, signal: controller.signal });
    await until(async () => (await queueLength('abort')) === 1);
    const reason = new Error('the caller went away');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(await queueLength('abort')).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect('abort')).toBeNull();
  });

  it('when an abort races the hand-off, the key is either the waiter’s lease or given back, never left held', async () => {
    for (let i = 0; i < 10; i++) {
      const key = `race:${i}`;
      const held = await holderApp.locks.acquire(key);
      const controller = new AbortController();
      const waiting = waiterApp.locks.acquire(key, { waitMs: 60_000, signal: controller.signal });
      await until(async () => (await queueLength(key)) === 1);
      const released = held.release();
      controller.abort(new Error('gave up'));
      await released;
      const outcome = await waiting.then(
        (lease: Lease) => lease,
        (error: unknown) => error,
      );
      if (outcome instanceof Error) {
        expect(outcome.message).toBe('gave up');
        await until(async () => (await holderApp.store.inspect(key)) === null);
      } else {
        await (outcome as Lease).release();
      }
      expect(await holderApp.store.inspect(key)).toBeNull();
      expect(await queueLength(key)).toBe(0);
    }
  });

  it('at shutdown: the wait ends with LockStoreUnavailableError and its entry goes', async () => {
    const leaving = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: 'leaving' });
    const held = await holderApp.locks.acquire('shutdown');
    const waiting = leaving.locks.acquire('shutdown', { waitMs: 60_000 });
    await until(async () => (await queueLength('shutdown')) === 1);
    const closed = leaving.close();
    await expect(waiting).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await closed;
    expect(await queueLength('shutdown')).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect('shutdown')).toBeNull();
  });

  it('for a semaphore: at the deadline, on abort and at shutdown, the waiter leaves no entry behind', async () => {
    const held = await holderApp.locks.acquire('permit', { permits: 1 });
    await expect(waiterApp.locks.acquire('permit', { permits: 1, waitMs: 150 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await permitQueueLength('permit')).toBe(0);

    const controller = new AbortController();
    const aborted = waiterApp.locks.acquire('permit', { permits: 1, waitMs: 60_000, signal: controller.signal });
    await until(async () => (await permitQueueLength('permit')) === 1);
    const reason = new Error('the caller went away');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(await permitQueueLength('permit')).toBe(0);

    const leaving = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: 'leaving' });
    const shutDown = leaving.locks.acquire('permit', { permits: 1, waitMs: 60_000 });
    await until(async () => (await permitQueueLength('permit')) === 1);
    const closed = leaving.close();
    await expect(shutDown).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await closed;
    expect(await permitQueueLength('permit')).toBe(0);
    await held.release();
    expect(await holderApp.store.inspect('permit')).toBeNull();
  });

  it('when an abort races the hand-off of a permit, the permit is the waiter’s lease or handed on to the next in line, never left held', async () => {
    for (let i = 0; i < 10; i++) {
      const key = `permit-race:${i}`;
      const held = await holderApp.locks.acquire(key, { permits: 1 });
      const controller = new AbortController();
      const waiting = waiterApp.locks.acquire(key, { permits: 1, waitMs: 60_000, signal: controller.signal });
      await until(async () => (await permitQueueLength(key)) === 1);
      const next = holderApp.locks.acquire(key, { permits: 1, waitMs: 60_000 });
      await until(async () => (await permitQueueLength(key)) === 2);
      const released = held.release();
      controller.abort(new Error('gave up'));
      await released;
      const outcome = await waiting.then(
        (lease: Lease) => lease,
        (error: unknown) => error,
      );
      if (outcome instanceof Error) expect(outcome.message).toBe('gave up');
      else await (outcome as Lease).release();
      // Left before it was handed the permit, or handed it and gave it back: either way it went on.
      const lease = await next;
      expect(lease.fencingToken).toBeGreaterThan(held.fencingToken);
      await lease.release();
      expect(await holderApp.store.inspect(key)).toBeNull();
      expect(await permitQueueLength(key)).toBe(0);
    }
  });
});
