import { Redis } from 'ioredis';
import { LeaseLostError } from '../../lib/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { createCounterApp, type CounterApp } from './counter.fixture';

describe('several keys at once, released after commit', () => {
  const prefix = testPrefix(__filename);
  let postgres: PostgresServer;
  let app: CounterApp;
  let redis: Redis;

  beforeAll(async () => {
    postgres = await startPostgresServer();
    app = await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix, leaseMs: 300 });
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
    await postgres.stop();
  });
  beforeEach(() => app.timeline.entries.splice(0));

  it('keeps every key of withLocks inside the caller’s transaction until its COMMIT', async () => {
    await app.counters.reset('from');
    await app.counters.reset('to');
    await app.counters.outer(async () => {
      await app.counters.locks.withLocks(['counter:to', 'counter:from'], async () => {
        await app.counters.readModifyWrite('from');
        await app.counters.readModifyWrite('to');
      });
      app.timeline.add('scope ended');
    });
    const { entries } = app.timeline;
    const commit = entries.indexOf('COMMIT');
    expect(commit).toBeGreaterThan(entries.indexOf('scope ended'));
    expect(entries.indexOf('released counter:from')).toBeGreaterThan(commit);
    expect(entries.indexOf('released counter:to')).toBeGreaterThan(commit);
    expect(await app.counters.value('from')).toBe(1);
    expect(await app.counters.value('to')).toBe(1);
  });

  it('rolls the transaction back and ends in LeaseLostError when one of the keys is lost before COMMIT', async () => {
    await app.counters.reset('lost-a');
    await app.counters.reset('lost-b');
    const call = app.counters.outer(async () => {
      await app.counters.locks.withLocks(['counter:lost-a', 'counter:lost-b'], async (set) => {
        await app.counters.readModifyWrite('lost-a');
        await app.counters.readModifyWrite('lost-b');
        await redis.del(`${prefix}counter:lost-b`);
        if (!set.signal.aborted) await new Promise((resolve) => set.signal.addEventListener('abort', resolve, { once: true }));
      });
    });
    await expect(call).rejects.toBeInstanceOf(LeaseLostError);
    expect(app.timeline.entries).toContain('ROLLBACK');
    expect(app.timeline.entries).not.toContain('COMMIT');
    expect(await app.counters.value('lost-a')).toBe(0);
  });

  it('lets a withLocks already waiting for a key join it when a sibling of the same transaction leaves it to the transaction', async () => {
    await app.counters.reset('shared');
    await app.counters.reset('own');
    const waiting = new Promise<void>((resolve) => {
      const off = app.events.on('contention', (e) => {
        if (e.key !== 'counter:shared') return;
        off();
        resolve();
      });
    });
    await app.counters.outer(async () => {
      await Promise.all([
        // The sibling takes the shared key first and ends its scope only once withLocks waits for it.
        app.counters.locks.withLock('counter:shared', async () => {
          await app.counters.readModifyWrite('shared');
          await waiting;
        }),
        app.counters.locks.withLocks(['counter:own', 'counter:shared'], { waitMs: 5_000 }, async () => {
          await app.counters.readModifyWrite('shared');
          await app.counters.readModifyWrite('own');
        }),
      ]);
    });
    expect(await app.counters.value('shared')).toBe(2);
    expect(await app.counters.value('own')).toBe(1);
    const { entries } = app.timeline;
    expect(entries.filter((entry) => entry === 'released counter:shared')).toHaveLength(1);
    expect(entries.indexOf('released counter:shared')).toBeGreaterThan(entries.indexOf('COMMIT'));
  });
});
