import { Redis } from 'ioredis';
import { LeaseLostError, type LockLostEvent } from '../../lib/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { createCounterApp, counterSuite, type CounterApp } from './counter.fixture';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('release after commit with @nestjs-cls/transactional', () => {
  const prefix = testPrefix(__filename);
  const suite = counterSuite({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 300 });

  it('keeps a lock taken inside the caller’s transaction until its COMMIT, renewing it meanwhile', async () => {
    await suite.app.counters.reset('outer');
    let renewalsAfterScope = 0;
    await suite.app.counters.incrementInTransaction('outer', async () => {
      // The lock scope has ended; the transaction goes on for longer than the 300 ms lease.
      const off = suite.app.events.on('renewed', (e) => e.key === 'counter:outer' && renewalsAfterScope++);
      await pause(1_000);
      off();
    });
    const { entries } = suite.app.timeline;
    expect(entries.indexOf('COMMIT')).toBeGreaterThanOrEqual(0);
    expect(entries.indexOf('released counter:outer')).toBeGreaterThan(entries.indexOf('COMMIT'));
    expect(renewalsAfterScope).toBeGreaterThan(0);
    expect(await suite.app.counters.value('outer')).toBe(1);
  });

  it('releases after ROLLBACK when the transaction fails, and the business error reaches the caller', async () => {
    await suite.app.counters.reset('rollback');
    const failure = new Error('payment provider said no');
    await expect(
      suite.app.counters.incrementInTransaction('rollback', async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    const { entries } = suite.app.timeline;
    expect(entries.indexOf('released counter:rollback')).toBeGreaterThan(entries.indexOf('ROLLBACK'));
    expect(await suite.app.counters.value('rollback')).toBe(0);
  });

  it('releases a lock taken in a RequiresNew transaction at that transaction’s own COMMIT', async () => {
    await suite.app.counters.reset('requires-new');
    await suite.app.counters.outer(async () => {
      await suite.app.counters.incrementInNewTransaction('requires-new');
      suite.app.timeline.add('inner returned');
    });
    const { entries } = suite.app.timeline;
    const innerCommit = entries.indexOf('COMMIT');
    expect(entries.indexOf('released counter:requires-new')).toBeGreaterThan(innerCommit);
    expect(entries.indexOf('released counter:requires-new')).toBeLessThan(entries.indexOf('inner returned'));
    expect(entries.indexOf('COMMIT', innerCommit + 1)).toBeGreaterThan(entries.indexOf('inner returned'));
  });

  it('rolls a lock taken in a nested (savepoint) transaction up to the outer COMMIT', async () => {
    await suite.app.counters.reset('nested');
    await suite.app.counters.outer(async () => {
      await suite.app.counters.incrementInSavepoint('nested');
      suite.app.timeline.add('savepoint returned');
    });
    const { entries } = suite.app.timeline;
    expect(entries).toContain('RELEASE SAVEPOINT');
    expect(entries.indexOf('released counter:nested')).toBeGreaterThan(entries.indexOf('COMMIT'));
    expect(entries.indexOf('COMMIT')).toBeGreaterThan(entries.indexOf('savepoint returned'));
    expect(await suite.app.counters.value('nested')).toBe(1);
  });

  it('rolls the transaction back and surfaces LeaseLostError when the lease is lost before COMMIT', async () => {
    await suite.app.counters.reset('lost');
    const call = suite.app.counters.incrementInTransaction('lost', async () => {
      const lost = new Promise<LockLostEvent>((resolve) => {
        const off = suite.app.events.on('lost', (e) => {
          off();
          resolve(e);
        });
      });
      await suite.redis.del(`${prefix}counter:lost`);
      await lost;
    });
    await expect(call).rejects.toBeInstanceOf(LeaseLostError);
    expect(suite.app.timeline.entries).toContain('ROLLBACK');
    expect(suite.app.timeline.entries).not.toContain('COMMIT');
    expect(await suite.app.counters.value('lost')).toBe(0);
  });

  it('rolls back when the process was frozen past the lease before COMMIT, before any timer could tell', async () => {
    await suite.app.counters.reset('frozen');
    const call = suite.app.counters.incrementInTransaction('frozen', async () => {
      // Blocks the event loop beyond the 300 ms lease: no watchdog timer can run until the commit decision.
      const until = Date.now() + 600;
      while (Date.now() < until);
    });
    await expect(call).rejects.toBeInstanceOf(LeaseLostError);
    expect(suite.app.timeline.entries).toContain('ROLLBACK');
    expect(suite.app.timeline.entries).not.toContain('COMMIT');
    expect(await suite.app.counters.value('frozen')).toBe(0);
  });
});

describe('a failing deferred release', () => {
  let postgres: PostgresServer;
  let server: RedisServer;
  let app: CounterApp;

  beforeAll(async () => {
    postgres = await startPostgresServer();
    server = await startRedisServer();
    app = await createCounterApp(postgres.url, { redis: server.url, keyPrefix: 'release-error:', commandTimeoutMs: 200 });
  });
  afterAll(async () => {
    server.resume();
    await app.close();
    await server.stop();
    await postgres.stop();
  });

  it('is reported as an event and never replaces the committed outcome or leaks a rejection', async () => {
    await app.counters.reset('release-error');
    const releaseFailed = new Promise((resolve) => app.events.on('release-failed', resolve));
    await app.counters.incrementInTransaction('release-error', async () => {
      server.pause();
    });
    expect(await releaseFailed).toMatchObject({ key: 'counter:release-error' });
    expect(app.timeline.entries).toContain('COMMIT');
    server.resume();
    expect(await app.counters.value('release-error')).toBe(1);
  });
});
