import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockStoreUnavailableError, type QueuedAcquireRequest } from '../../lib/index';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { warmFairScripts } from '../support/fair-scripts';
import { redisUrl, testPrefix } from '../support/test-prefix';

const TIMEOUT_MS = 300;

async function until(condition: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

/**
 * `fair: true`, Redis stalls longer than the wait: the queued acquire's join times out, so do its clean-ups,
 * and the call fails with LockStoreUnavailableError. When Redis answers again, the join still runs and grants
 * the key to the failed call's token. That grant must be given back once its late reply arrives (it was
 * left for the whole lease: a 60 s lease, nobody holding it).
 */
// The same for a semaphore waiter, whose join grants a permit (a hold in the key's hash) to the failed call.
const WAITS: Array<[string, (store: RedisLockStore, request: QueuedAcquireRequest) => Promise<unknown>]> = [
  ['a plain lock', (store, request) => store.acquireQueued!(request)],
  ['a semaphore', (store, request) => store.acquireSharedQueued!(request, { permits: 2 })],
];

describe.each(WAITS)('fair queue: a wait for %s that failed while Redis stalled', (_name, wait) => {
  it('leaves nothing held once the stalled calls run', async () => {
    const prefix = testPrefix(__filename);
    const store = new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: TIMEOUT_MS, fair: true });
    const admin = new Redis(redisUrl());
    try {
      await warmFairScripts(store);

      // A stall well past the wait and every clean-up's own timeout: all of them are given up before it ends.
      const stallEndsAt = Date.now() + TIMEOUT_MS * 10;
      await admin.call('CLIENT', 'PAUSE', String(TIMEOUT_MS * 10), 'WRITE');
      const failed = wait(store, { key: 'k', token: randomUUID(), leaseMs: 60_000, holder: 'test', deadline: Date.now() + TIMEOUT_MS * 2 });
      await expect(failed).rejects.toBeInstanceOf(LockStoreUnavailableError);
      // The stall ends; the stalled calls run in order on the store's connection, which a call of its own
      // sent now waits behind. The join granted the free key: its late reply is what the store must act on.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, stallEndsAt - Date.now())));
      await store.inspect('k');
      const freed = await until(async () => (await admin.exists(`${prefix}k`)) === 0, 5_000);
      expect({ freed, pttl: await admin.pttl(`${prefix}k`) }).toEqual({ freed: true, pttl: -2 });
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      await store.close();
      admin.disconnect();
    }
  });
});
