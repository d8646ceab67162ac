import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * `autoRenew: false` asks for one lease of `leaseMs`, kept alive by explicit extend() calls only. A fair
 * hand-off starts the key with the waiter's 2 s heartbeat lease: without the one renewal that brings it up
 * to `leaseMs`, the lease the caller asked for lasts 2 s.
 */
describe('fair: true — a hand-off to a caller with autoRenew: false', () => {
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

  it('gets the whole lease it asked for, not the hand-off TTL', async () => {
    const leaseMs = 20_000;
    const lockKey = layout.lockKey('manual');
    const holder = await apps[0]!.locks.acquire('manual', { leaseMs });
    const waiting = apps[1]!.locks.acquire('manual', { waitMs: 60_000, leaseMs, autoRenew: false });
    await until(async () => (await redis.llen(layout.queueKey(lockKey))) === 1);
    await holder.release();
    const lease = await waiting;
    try {
      await until(async () => !lease.held || (await redis.pttl(lockKey)) > 10_000);
      expect(lease.held).toBe(true);
    } finally {
      await lease.release().catch(() => undefined);
    }
  });
});
