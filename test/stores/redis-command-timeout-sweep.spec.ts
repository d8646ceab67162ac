import { performance } from 'node:perf_hooks';
import { LockStoreUnavailableError } from '../../lib/errors/lock-store-unavailable.error';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { TcpProxy } from '../support/tcp-proxy';
import { redisUrl, testPrefix } from '../support/test-prefix';

const TIMEOUT_MS = 1_000;

/**
 * The shared sweep promises "a command fails between one and one and a quarter timeouts after it was
 * sent (never earlier)". The bound asserted here is one-sided: timers only ever fire late on a loaded box,
 * so a correct sweep can never fail a command early.
 */
describe('command timeouts from the shared sweep', () => {
  it('never fails a command before its timeout, also after a timed-out acquire sent its clean-up from inside the sweep', async () => {
    const proxy = await TcpProxy.start(Number(new URL(redisUrl()).port));
    const store = new RedisLockStore(createRedisConnection(proxy.url), { keyPrefix: testPrefix(__filename), commandTimeoutMs: TIMEOUT_MS });
    try {
      await store.inspect('warm-up');
      proxy.holdServerData();
      // The acquire goes unanswered: the sweep fails it and its clean-up (a release) is sent from inside the sweep.
      await expect(store.acquire('a', 'token-a', 10_000, 'test')).rejects.toBeInstanceOf(LockStoreUnavailableError);
      const sentAt = performance.now();
      await expect(store.inspect('b')).rejects.toBeInstanceOf(LockStoreUnavailableError);
      expect(performance.now() - sentAt).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.95);
    } finally {
      await store.close();
      await proxy.close();
    }
  });
});
