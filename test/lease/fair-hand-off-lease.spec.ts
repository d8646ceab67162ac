import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { pollUntil, spinUntil } from '../support/until';

/**
 * A fair hand-off grants the next waiter only its heartbeat lease (2 s) until that waiter's watchdog brings
 * the key up to the lease it asked for. The lease handed out must be the one asked for: neither declared
 * lost for the short start nor left at it.
 */
describe('fair: true — the lease of a waiter the key was handed to', () => {
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

  const queued = (key: string) => spinUntil(async () => (await redis.llen(layout.queueKey(layout.lockKey(key)))) === 1);

  it('runs the waiter instead of declaring its fresh lease lost when the lease is long', async () => {
    // The local deadline of the short grant allows for the drift of the short TTL, not of the whole lease:
    // 1 % of a 5-minute lease is 3 s, more than the hand-off's TTL.
    const leaseMs = 300_000;
    const holder = await apps[0]!.locks.acquire('long', { leaseMs });
    const ran: number[] = [];
    const waiter = apps[1]!.locks.withLock('long', { waitMs: 60_000, leaseMs }, (lease) => ran.push(lease.fencingToken));
    await queued('long');
    await holder.release();
    await expect(waiter).resolves.toBe(1);
    expect(ran[0]).toBeGreaterThan(holder.fencingToken);
  });

  it('gives a caller with autoRenew: false the whole lease it asked for, not the hand-off TTL', async () => {
    // autoRenew: false asks for one lease of leaseMs, kept alive by explicit extend() calls only: without the
    // one renewal that brings the hand-off up to leaseMs, it would last 2 s.
    const leaseMs = 20_000;
    const lockKey = layout.lockKey('manual');
    const holder = await apps[0]!.locks.acquire('manual', { leaseMs });
    const waiting = apps[1]!.locks.acquire('manual', { waitMs: 60_000, leaseMs, autoRenew: false });
    await queued('manual');
    await holder.release();
    const lease = await waiting;
    try {
      await spinUntil(async () => !lease.held || (await redis.pttl(lockKey)) > 10_000);
      expect(lease.held).toBe(true);
    } finally {
      await lease.release().catch(() => undefined);
    }
  });
  it('counts the lease of a waiter handed the key after a long wait from its latest look, not from when it joined', async () => {
    // The hand-off's TTL (one heartbeat) runs from the hand-off; the waiter counts it, conservatively, from
    // its latest call that found it waiting. Counted from the join instead, a wait longer than a heartbeat
    // ends in a lease that is already past its deadline: declared lost before the watchdog's first renewal.
    const holder = await apps[0]!.locks.acquire('late', { leaseMs: 8_000 });
    const waiting = apps[1]!.locks.acquire('late', { waitMs: 60_000, leaseMs: 8_000 });
    await queued('late');
    // Each look rewrites the waiter's entry with its clock: wait until one came more than a heartbeat (2 s)
    // after the join.
    const queueKey = layout.queueKey(layout.lockKey('late'));
    const clockMs = async () => Number((await redis.lindex(queueKey, 0))?.split('|')[0] ?? 0) / 1000;
    const joinedAt = await clockMs();
    await pollUntil(async () => (await clockMs()) > joinedAt + 2_000, 'a look at the line more than a heartbeat after the join');
    await holder.release();
    const lease = await waiting;
    expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(lease.held).toBe(true);
    await expect(lease.release()).resolves.toBeUndefined();
  });
});
