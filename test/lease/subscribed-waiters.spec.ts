import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

/**
 * A waiter subscribed to its key's release notifications is woken by the release: the fallback timer is a
 * rare safety net for a missed notification, never a steady poll while the channel is live. With the
 * default delays (10 ms doubling to 1 s) a waiter that slept min(backoff, …) woke 5–6 times during a
 * 600 ms hold; here the holder releases after 600 ms and the waiter may wake by backoff at most once.
 */
describe('a waiter subscribed to release notifications', () => {
  const prefix = testPrefix(__filename);
  let holder: LockApp;
  let waiter: LockApp;

  beforeAll(async () => {
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 30_000 });
    waiter = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 30_000 });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
  });

  it('is woken by the release, not by polling', async () => {
    for (let round = 0; round < 3; round++) {
      const key = `hot-${round}`;
      const lease = await holder.locks.acquire(key);
      const contended = waiter.next('contention', (e) => e.key === key);
      const waiting = waiter.locks.acquire(key, { waitMs: 10_000 });
      await contended;
      await new Promise((resolve) => setTimeout(resolve, 600));
      await lease.release();
      await (await waiting).release();
      const acquired = waiter.recorded('acquired').find((e) => e.key === key)!;
      // Woken by the notification, or by a safety-net wake-up whose attempt came right after the release.
      expect(acquired.wakeUps.backoff).toBeLessThanOrEqual(1);
      expect(acquired.wakeUps.notification + acquired.wakeUps.backoff).toBeGreaterThanOrEqual(1);
      // The first attempt, the re-check right after subscribing, a safety-net wake-up at most, the last one.
      expect(acquired.attempts).toBeLessThanOrEqual(4);
    }
  });
});
