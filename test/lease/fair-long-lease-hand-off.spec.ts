import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A hand-off grants the next waiter only its heartbeat lease (2 s) until its watchdog extends it. The
 * local deadline of that short grant must allow for the drift of the short TTL, not of the whole lease:
 * 1 % of a 5-minute lease is 3 s, more than the hand-off's TTL.
 */
describe('fair: true — a hand-off of a key with a long lease', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  let apps: LockApp[];
  beforeAll(async () => {
    apps = await Promise.all([0, 1].map((i) => createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: `app-${i}` })));
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    redis.disconnect();
  });

  it('runs the waiter that was handed the key instead of declaring its fresh lease lost', async () => {
    const leaseMs = 300_000;
    const holder = await apps[0]!.locks.acquire('long', { leaseMs });
    const ran: number[] = [];
    const waiter = apps[1]!.locks.withLock('long', { waitMs: 60_000, leaseMs }, (lease) => ran.push(lease.fencingToken));
    await until(async () => (await redis.llen(layout.queueKey(layout.lockKey('long')))) === 1);
    await holder.release();
    await expect(waiter).resolves.toBe(1);
    expect(ran[0]).toBeGreaterThan(holder.fencingToken);
  });
});
