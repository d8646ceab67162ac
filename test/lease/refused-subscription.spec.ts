import { Redis } from 'ioredis';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { spinUntil } from '../support/until';

/**
 * A waiter whose release subscription was refused (its subscriber connection still coming up after a
 * start or a failover, a server that turned it away) must not poll for the rest of its wait: it subscribes
 * again at its next wake-up, and once the channel is live it is woken by the release. Here the waiter's
 * Redis user may not subscribe at first (ACL `resetchannels`: SUBSCRIBE is refused with NOPERM), and is
 * allowed to once the refusal is in the ACL log.
 */
describe('a waiter whose release subscription was refused', () => {
  const prefix = testPrefix(__filename);
  const admin = new Redis(redisUrl());
  const user = `refused-sub-${process.pid}`;
  const password = 'refused-subscription-password';
  let holder: LockApp;
  let waiter: LockApp;

  beforeAll(async () => {
    await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, '~*', 'resetchannels', '+@all');
    await admin.call('ACL', 'LOG', 'RESET');
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 30_000 });
    const url = redisUrl().replace('redis://', `redis://${user}:${password}@`);
    // A safety net of 2.5-5 s: once subscribed, only the release can wake the waiter in the few ms the test
    // takes to release (with the default, a loaded box could let the safety net fire first).
    waiter = await createLockApp({ redis: url, keyPrefix: prefix, leaseMs: 30_000, retryMaxDelayMs: 5_000 });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  it('subscribes again at a later wake-up and is then woken by the release, not by polling', async () => {
    // Seen from the store: the waiter's attempts, and how many it had made when a subscription was confirmed.
    const store = waiter.store;
    let attempts = 0;
    let attemptsWhenSubscribed: number | undefined;
    const acquire = store.acquire.bind(store);
    const onRelease = store.onRelease.bind(store);
    store.acquire = async (...args) => {
      const result = await acquire(...args);
      attempts++;
      return result;
    };
    store.onRelease = async (...args) => {
      const stop = await onRelease(...args);
      attemptsWhenSubscribed = attempts;
      return stop;
    };

    const lease = await holder.locks.acquire('refused');
    const contended = waiter.next('contention', (e) => e.key === 'refused');
    const waiting = waiter.locks.acquire('refused', { waitMs: 60_000 });
    await contended;
    await spinUntil(async () => {
      const log = (await admin.call('ACL', 'LOG')) as unknown[][];
      return log.some((entry) => entry.includes(user) && entry.includes('channel'));
    });
    expect(attemptsWhenSubscribed).toBeUndefined();
    await admin.call('ACL', 'SETUSER', user, 'allchannels');
    // The confirmation wakes the waiter for one attempt (it catches a release that came before the channel
    // was live); released only after that attempt, the key can reach the waiter through the channel alone.
    await spinUntil(() => attemptsWhenSubscribed !== undefined && attempts > attemptsWhenSubscribed);

    await lease.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next.release();
    const acquired = waiter.recorded('acquired').find((e) => e.key === 'refused')!;
    expect(acquired.wakeUps.notification).toBe(1);
  });
});
