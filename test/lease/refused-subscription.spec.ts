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
 *
 * A waiter in the Redis queue (the default; `fair: true` waits the same way) whose grant channel was refused
 * still gets the key, by its own heartbeat looks at the line, and says so: its grant counts as a `backoff` wake-up, the series the
 * "waiters wake by backoff" alert reads (docs/observability.md).
 */
describe('a waiter whose release subscription was refused', () => {
  const prefix = testPrefix(__filename);
  const admin = new Redis(redisUrl());
  const user = `refused-sub-${process.pid}`;
  const password = 'refused-subscription-password';
  let holder: LockApp;
  let waiter: LockApp;
  let queuedWaiter: LockApp;

  beforeAll(async () => {
    await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, '~*', 'resetchannels', '+@all');
    await admin.call('ACL', 'LOG', 'RESET');
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 30_000 });
    const url = redisUrl().replace('redis://', `redis://${user}:${password}@`);
    // A safety net of 2.5-5 s: once subscribed, only the release can wake the waiter in the few ms the test
    // takes to release (with the default, a loaded box could let the safety net fire first).
    // Waiting on release notices is what waiters do that race (`queue: false`); queued ones hear of grants.
    waiter = await createLockApp({ redis: url, keyPrefix: prefix, leaseMs: 30_000, retryMaxDelayMs: 5_000, queue: false });
    queuedWaiter = await createLockApp({ redis: url, keyPrefix: prefix, leaseMs: 30_000 });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
    await queuedWaiter.close();
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  it('in the queue, gets a key handed over by its own looks, and reports the grant as a backoff wake-up', async () => {
    // Refused subscriptions so far (the ACL log folds repeats into one entry's `count`).
    const refusals = async () =>
      ((await admin.call('ACL', 'LOG')) as unknown[][])
        .filter((entry) => entry.includes(user) && entry.includes('channel'))
        .reduce((sum, entry) => sum + Number(entry[entry.indexOf('count') + 1]), 0);
    const refusedBefore = await refusals();
    const lease = await holder.locks.acquire('refused-fair');
    const contended = queuedWaiter.next('contention', (e) => e.key === 'refused-fair');
    const waiting = queuedWaiter.locks.acquire('refused-fair', { waitMs: 60_000 });
    await contended;
    // In line, and its grant channel refused: the hand-off's message cannot reach it.
    await spinUntil(async () => (await refusals()) > refusedBefore);
    await lease.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    // Its release announces itself to the line (PUBLISH from the script), which the channels refused here
    // forbid too: allowed for that, and refused again for the next test.
    await admin.call('ACL', 'SETUSER', user, 'allchannels');
    await next.release();
    await admin.call('ACL', 'SETUSER', user, 'resetchannels');
    await admin.call('ACL', 'LOG', 'RESET');
    const acquired = queuedWaiter.recorded('acquired').find((e) => e.key === 'refused-fair')!;
    expect(acquired.wakeUps).toEqual({ notification: 0, backoff: 1, expiry: 0, deadline: 0 });
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
