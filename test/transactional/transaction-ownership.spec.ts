import { LeaseLostError, LockService, trackTransaction } from '../../lib/index';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { Counter, counterSuite, type CounterApp } from './counter.fixture';
import type { EntityManager } from 'typeorm';

function lostOnce(app: CounterApp, key: string): Promise<unknown> {
  return new Promise((resolve) => {
    const off = app.events.on('lost', (e) => {
      if (e.key !== key) return;
      off();
      resolve(e);
    });
  });
}

describe('a transaction owns the keys whose release it holds', () => {
  const prefix = testPrefix(__filename);
  const suite = counterSuite({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 2_000 });

  it('runs a second locked call on the same key inside one transaction under the first one’s lease', async () => {
    await suite.app.counters.reset('checkout');
    await suite.app.counters.checkout('checkout');
    expect(await suite.app.counters.value('checkout')).toBe(2);
    const { entries } = suite.app.timeline;
    expect(entries.filter((entry) => entry === 'released counter:checkout')).toHaveLength(1);
    expect(entries.indexOf('released counter:checkout')).toBeGreaterThan(entries.indexOf('COMMIT'));
  });

  it('lets a sibling step of the same transaction waiting for the key (Promise.all) join the deferred lease', async () => {
    await suite.app.counters.reset('parallel');
    await suite.app.counters.checkoutInParallel('parallel');
    expect(await suite.app.counters.value('parallel')).toBe(2);
    const { entries } = suite.app.timeline;
    expect(entries.filter((entry) => entry === 'released counter:parallel')).toHaveLength(1);
    expect(entries.indexOf('released counter:parallel')).toBeGreaterThan(entries.indexOf('COMMIT'));
  });

  it('does not silently skip the second step with onLocked: skip', async () => {
    await suite.app.counters.reset('skip');
    expect(await suite.app.counters.checkoutOrSkip('skip')).toBe('paid');
    expect(await suite.app.counters.value('skip')).toBe(2);
  });

  it('still owns the key after a rolled-back savepoint that took it', async () => {
    await suite.app.counters.reset('savepoint');
    await suite.app.counters.checkoutAfterFailedSavepoint('savepoint');
    expect(suite.app.timeline.entries).toContain('ROLLBACK TO SAVEPOINT');
    expect(await suite.app.counters.value('savepoint')).toBe(1);
  });

  it('owns the key across a retried transaction callback', async () => {
    await suite.app.counters.reset('retried');
    const locks = suite.app.counters.locks;
    let attempt = 0;
    const retrying = async (work: (em: EntityManager) => Promise<void>): Promise<void> => {
      for (;;) {
        try {
          return await suite.app.dataSource.transaction(work);
        } catch (error) {
          if (++attempt > 1) throw error;
        }
      }
    };
    await trackTransaction(retrying, async (em: EntityManager) => {
      await locks.withLock('counter:retried', { waitMs: 1_000 }, async () => {
        const row = await em.findOneByOrFail(Counter, { id: 'retried' });
        await em.update(Counter, { id: 'retried' }, { value: row.value + 1 });
      });
      if (attempt === 0) throw new Error('serialization failure, retry');
    });
    expect(attempt).toBe(1);
    expect(await suite.app.counters.value('retried')).toBe(1);
  });

  it('holds a lock taken inside transactions on two databases until the outer one commits', async () => {
    await suite.app.counters.reset('two-db');
    const locks: LockService = suite.app.counters.locks;
    const begin = (work: (em: EntityManager) => Promise<void>): Promise<void> => suite.app.dataSource.transaction(work);
    await trackTransaction(
      begin,
      async (db1: EntityManager) => {
        await trackTransaction(
          begin,
          async (db2: EntityManager) => {
            await locks.withLock('counter:two-db', async () => {
              const row = await db1.findOneByOrFail(Counter, { id: 'two-db' });
              await db1.update(Counter, { id: 'two-db' }, { value: row.value + 1 });
              await db2.query('SELECT 1');
            });
          },
          { resource: 'db2' },
        );
        suite.app.timeline.add('db2 committed');
      },
      { resource: 'db1' },
    );
    const { entries } = suite.app.timeline;
    const db1Commit = entries.indexOf('COMMIT', entries.indexOf('db2 committed'));
    expect(db1Commit).toBeGreaterThan(0);
    expect(entries.indexOf('released counter:two-db')).toBeGreaterThan(db1Commit);
  });

  it('stops the COMMIT of a transaction started inside a locked scope when the lease is lost first', async () => {
    await suite.app.counters.reset('lock-outside');
    const key = `${prefix}counter:lock-outside`;
    const call = suite.app.counters.locks.withLock('counter:lock-outside', () =>
      trackTransaction(
        (work: (em: EntityManager) => Promise<void>) => suite.app.dataSource.transaction(work),
        async (em: EntityManager) => {
          await em.update(Counter, { id: 'lock-outside' }, { value: 41 });
          const lost = lostOnce(suite.app, 'counter:lock-outside');
          await suite.redis.del(key);
          await lost;
        },
      ),
    );
    await expect(call).rejects.toBeInstanceOf(LeaseLostError);
    expect(suite.app.timeline.entries).toContain('ROLLBACK');
    expect(suite.app.timeline.entries).not.toContain('COMMIT');
    expect(await suite.app.counters.value('lock-outside')).toBe(0);
  });

  it('stops the COMMIT with @DistributedLock above @Transactional when the lease is lost first', async () => {
    await suite.app.counters.reset('decorated-outside');
    const call = suite.app.counters.incrementLockOutsideThen('decorated-outside', async () => {
      const lost = lostOnce(suite.app, 'counter:decorated-outside');
      await suite.redis.del(`${prefix}counter:decorated-outside`);
      await lost;
    });
    await expect(call).rejects.toBeInstanceOf(LeaseLostError);
    expect(suite.app.timeline.entries).toContain('ROLLBACK');
    expect(suite.app.timeline.entries).not.toContain('COMMIT');
    expect(await suite.app.counters.value('decorated-outside')).toBe(0);
  });
});
