import { randomBytes } from 'node:crypto';
import {
  assertLeaseHeld,
  LeaseLostError,
  PostgresLockStore,
  trackedTransactions,
  type Lease,
  type LockModuleOptions,
  type TransactionSynchronizer,
} from '../../lib/index';
import { Counter, createCounterApp, type CounterApp } from '../transactional/counter.fixture';
import { openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';

const LOOPS_PER_APP = 3;
const ITERATIONS = 6;

/** Releases as if no transaction were running: the release-before-commit bug this library prevents. */
const releaseBeforeCommit: TransactionSynchronizer = { ...trackedTransactions, isTransactionActive: () => false };

/**
 * Release after commit on the PostgreSQL store: the leases and the counters share one database, but the
 * lock statements run on the store's own pool, outside the business transaction, and the release still
 * waits for that transaction's COMMIT.
 */
describe('release after commit on the PostgreSQL store', () => {
  const prefix = `rac:${randomBytes(3).toString('hex')}:`;
  let db: PostgresTestDatabase;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
  });
  afterAll(() => db.stop());

  async function hammer(options: Partial<LockModuleOptions>, id: string, run: (app: CounterApp) => Promise<void>): Promise<number> {
    const lockOptions: LockModuleOptions = { store: 'postgres', postgres: db.url, keyPrefix: prefix, ...options };
    const apps = [await createCounterApp(db.url, lockOptions), await createCounterApp(db.url, lockOptions)];
    try {
      await apps[0]!.counters.reset(id);
      await Promise.all(
        apps.flatMap((app) =>
          Array.from({ length: LOOPS_PER_APP }, async () => {
            for (let i = 0; i < ITERATIONS; i++) await run(app);
          }),
        ),
      );
      return await apps[0]!.counters.value(id);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  }

  const total = 2 * LOOPS_PER_APP * ITERATIONS;

  it('releases a lock taken inside a transaction only after its COMMIT', async () => {
    const app = await createCounterApp(db.url, { store: 'postgres', postgres: db.url, keyPrefix: prefix });
    try {
      await app.counters.reset('order');
      app.timeline.entries.splice(0);
      await app.counters.incrementInTransaction('order');
      const { entries } = app.timeline;
      expect(entries.indexOf('COMMIT')).toBeGreaterThanOrEqual(0);
      expect(entries.indexOf('released counter:order')).toBeGreaterThan(entries.indexOf('COMMIT'));
      expect(await app.counters.value('order')).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('loses no update when the transaction encloses the lock (@Transactional above @DistributedLock)', async () => {
    expect(await hammer({}, 'inside', (app) => app.counters.incrementLockInside('inside'))).toBe(total);
  });

  it('loses no update when the lock is taken inside the caller’s transaction (withLock in @Transactional)', async () => {
    expect(await hammer({}, 'in-transaction', (app) => app.counters.incrementInTransaction('in-transaction'))).toBe(total);
  });

  it('loses updates with release-before-commit on the same workload (the test can fail)', async () => {
    const value = await hammer({ transactionSynchronizer: releaseBeforeCommit }, 'broken', (app) =>
      app.counters.incrementInTransaction('broken'),
    );
    expect(value).toBeLessThan(total);
  });

  it('checks the lease inside a TypeORM transaction and refuses the write of a holder that was replaced', async () => {
    const store = await PostgresLockStore.create({ connection: db.url, keyPrefix: prefix });
    const app = await createCounterApp(db.url, { store });
    const other = await createCounterApp(db.url, { store: 'postgres', postgres: db.url, keyPrefix: prefix });
    try {
      await app.counters.reset('typeorm');
      const increment = (lease: Lease) =>
        app.dataSource.transaction(async (em) => {
          await assertLeaseHeld(em, store, lease);
          await em.increment(Counter, { id: 'typeorm' }, 'value', 1);
        });
      await app.counters.locks.withLock('counter:typeorm', (lease) => increment(lease));

      const stale = await app.counters.locks.acquire('counter:typeorm');
      // An operator force-released it (the holder looked stuck) and another instance took over.
      await store.forceRelease('counter:typeorm', stale.fencingToken);
      const current = await other.counters.locks.acquire('counter:typeorm');
      await expect(increment(stale)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await app.counters.value('typeorm')).toBe(1);
      await current.release();
      await expect(stale.release()).rejects.toBeInstanceOf(LeaseLostError);
    } finally {
      await app.close();
      await other.close();
    }
  });
});
