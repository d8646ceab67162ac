import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

/**
 * A waiter subscribed to its key's release notifications is woken by the release: the fallback timer is a
 * rare safety net for a missed notification, never a steady poll while the channel is live. With the
 * default delays (10 ms doubling to 1 s) a waiter that slept min(backoff, …) woke 5–6 times during a
 * 600 ms hold; here the holder releases after 600 ms and the waiter may wake by backoff at most once.
 * In the fair queue (`fair: true`) the waiter stands in line and the release hands it the key with a
 * message on its grant channel: it reports that one wake-up, by notification, whatever looks it made in line.
 */
describe.each([
  { mode: 'retrying on release notifications (the default)', fair: false },
  { mode: 'in the fair queue (fair: true)', fair: true },
])('a waiter subscribed to release notifications, $mode', ({ fair }) => {
  const prefix = testPrefix(__filename);
  let holder: LockApp;
  let waiter: LockApp;

  beforeAll(async () => {
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 30_000, fair });
    waiter = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 30_000, fair });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
  });

  it('is woken by the release, not by polling', async () => {
    for (let round = 0; round < 3; round++) {
      const key = `hot-${fair}-${round}`;
      const lease = await holder.locks.acquire(key);
      const contended = waiter.next('contention', (e) => e.key === key);
      const waiting = waiter.locks.acquire(key, { waitMs: 10_000 });
      await contended;
      // Fair: released well before the waiter's first heartbeat look (a third of its 2 s heartbeat lease
      // after it joined), which would otherwise race the hand-off's message.
      await new Promise((resolve) => setTimeout(resolve, fair === false ? 600 : 300));
      await lease.release();
      await (await waiting).release();
      const acquired = waiter.recorded('acquired').find((e) => e.key === key)!;
      if (fair === false) {
        // Woken by the notification, or by a safety-net wake-up whose attempt came right after the release.
        expect(acquired.wakeUps.backoff).toBeLessThanOrEqual(1);
        expect(acquired.wakeUps.notification + acquired.wakeUps.backoff).toBeGreaterThanOrEqual(1);
        // The first attempt, the re-check right after subscribing, a safety-net wake-up at most, the last one.
        expect(acquired.attempts).toBeLessThanOrEqual(4);
      } else {
        // Handed the key by the release; a heartbeat look in line may have come first, but found it taken.
        expect(acquired.wakeUps).toEqual({ notification: 1, backoff: 0, expiry: 0, deadline: 0 });
        // The first attempt, the join, the catch-up look after subscribing, a heartbeat look or two at most.
        expect(acquired.attempts).toBeLessThanOrEqual(5);
      }
    }
  });
});
