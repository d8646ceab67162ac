import { Redis } from 'ioredis';
import type { Lease } from '../../lib/index';
import { commandCalls } from '../support/command-stats';
import { createLockApp, type LockApp } from '../support/lock-app';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { testPrefix } from '../support/test-prefix';

describe('lease watchdog', () => {
  const prefix = testPrefix(__filename);
  let server: RedisServer;
  let holder: LockApp;
  let rivalApp: LockApp;
  let redis: Redis;

  beforeAll(async () => {
    // A private server, so INFO commandstats counts this file's commands only.
    server = await startRedisServer();
    holder = await createLockApp({ redis: server.url, keyPrefix: prefix, leaseMs: 300 });
    rivalApp = await createLockApp({ redis: server.url, keyPrefix: prefix });
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await holder.close();
    await rivalApp.close();
    redis.disconnect();
    await server.stop();
  });

  it('keeps a 300 ms lease for a 2 s scope: no other acquirer ever gets in', async () => {
    let scopeOpen = true;
    let rivalGrants = 0;
    let rivalAttempts = 0;
    const rival = async (): Promise<void> => {
      while (scopeOpen) {
        const lease = await rivalApp.locks.tryAcquire('report');
        rivalAttempts++;
        if (lease) {
          rivalGrants++;
          await lease.release();
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await holder.locks.withLock('report', async (lease) => {
      const rivalLoop = rival();
      const started = Date.now();
      while (Date.now() - started < 2_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(lease.signal.aborted).toBe(false);
      }
      // Every rival attempt ends before the scope does, so none can race the release.
      scopeOpen = false;
      await rivalLoop;
    });
    expect(rivalAttempts).toBeGreaterThan(10);
    expect(rivalGrants).toBe(0);
    expect(holder.recorded('renewed').filter((e) => e.key === 'report').length).toBeGreaterThanOrEqual(5);
    expect(holder.recorded('lost')).toEqual([]);
  });

  it('renews many held leases in batched calls, not one command per lease', async () => {
    const LEASES = 50;
    const before = await commandCalls(redis);
    const renewedBefore = holder.recorded('renewed').length;
    const leases: Lease[] = [];
    for (let i = 0; i < LEASES; i++) leases.push(await holder.locks.acquire(`batch:${i}`));
    await new Promise<void>((resolve) => {
      const off = holder.events.on('renewed', () => {
        if (holder.recorded('renewed').length - renewedBefore >= LEASES * 5) {
          off();
          resolve();
        }
      });
    });
    await Promise.all(leases.map((lease) => lease.release()));
    const after = await commandCalls(redis);
    const renewals = holder.recorded('renewed').length - renewedBefore;
    // EVALSHA counts acquisitions + releases + renew calls; what is left is the number of renew calls.
    const renewCalls = (after.evalsha ?? 0) - (before.evalsha ?? 0) - 2 * LEASES;
    expect(renewals).toBeGreaterThanOrEqual(LEASES * 5);
    expect(renewCalls).toBeGreaterThan(0);
    expect(renewCalls * 10).toBeLessThanOrEqual(renewals);
  });

  it('never reports on a lease again once it is released', async () => {
    const lease = await holder.locks.acquire('released-early');
    await lease.release();
    await lease.release();
    const clock = await holder.locks.acquire('clock');
    // Wait out several renew intervals, measured by the other lease's renewals rather than by a sleep.
    await new Promise<void>((resolve) => {
      let seen = 0;
      const off = holder.events.on('renewed', (e) => {
        if (e.key === 'clock' && ++seen === 4) {
          off();
          resolve();
        }
      });
    });
    await clock.release();
    const about = (e: { key: string }): boolean => e.key === 'released-early';
    expect(holder.recorded('renewed').filter(about)).toEqual([]);
    expect(holder.recorded('lost').filter(about)).toEqual([]);
    expect(holder.recorded('released').filter(about)).toHaveLength(1);
    expect(lease.signal.aborted).toBe(false);
  });
});
