import { Redis } from 'ioredis';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

/** Resolves once `condition` holds, looking every 20 ms; rejects after `withinMs` with what it waited for. */
async function until(what: string, condition: () => Promise<boolean>, withinMs = 15_000): Promise<void> {
  const giveUpAt = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`still waiting for ${what} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

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
    waiter = await createLockApp({ redis: url, keyPrefix: prefix, leaseMs: 30_000 });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  it('subscribes again at a later wake-up and is then woken by the release, not by polling', async () => {
    const lease = await holder.locks.acquire('refused');
    const contended = waiter.next('contention', (e) => e.key === 'refused');
    const waiting = waiter.locks.acquire('refused', { waitMs: 60_000 });
    await contended;
    await until('the refused SUBSCRIBE in the ACL log', async () => {
      const log = (await admin.call('ACL', 'LOG')) as unknown[][];
      return log.some((entry) => entry.includes(user) && entry.includes('channel'));
    });
    await admin.call('ACL', 'SETUSER', user, 'allchannels');
    await until('the waiter subscribed to the key', async () => {
      const channels = (await admin.call('PUBSUB', 'CHANNELS', `*${prefix}*`)) as string[];
      return channels.length > 0;
    });

    await lease.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next.release();
    const acquired = waiter.recorded('acquired').find((e) => e.key === 'refused')!;
    expect(acquired.wakeUps.notification).toBeGreaterThanOrEqual(1);
  });
});
