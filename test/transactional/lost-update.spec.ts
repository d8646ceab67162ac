import { trackedTransactions, type TransactionSynchronizer } from '../../lib/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { Counter, createCounterApp, type CounterApp } from './counter.fixture';

const LOOPS_PER_APP = 4;
const ITERATIONS = 8;

/** Releases as if no transaction were running: the release-before-commit bug this library prevents. */
const releaseBeforeCommit: TransactionSynchronizer = { ...trackedTransactions, isTransactionActive: () => false };

async function hammer(apps: CounterApp[], id: string): Promise<number> {
  await apps[0]!.counters.reset(id);
  await Promise.all(
    apps.flatMap((app) =>
      Array.from({ length: LOOPS_PER_APP }, async () => {
        for (let i = 0; i < ITERATIONS; i++) await app.counters.incrementInTransaction(id);
      }),
    ),
  );
  return apps[0]!.counters.value(id);
}

describe('no lost updates: the lease is released after the transaction commits', () => {
  let postgres: PostgresServer;
  const prefix = testPrefix(__filename);
  const total = 2 * LOOPS_PER_APP * ITERATIONS;

  beforeAll(async () => {
    postgres = await startPostgresServer();
  });
  afterAll(() => postgres.stop());

  it('two app instances, READ COMMITTED read-modify-write under one key: the counter is exactly N', async () => {
    const apps = [
      await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix }),
      await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix }),
    ];
    try {
      expect(await hammer(apps, 'safe')).toBe(total);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  it('the same workload with release-before-commit loses updates (the test can fail)', async () => {
    const apps = [
      await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix, transactionSynchronizer: releaseBeforeCommit }),
      await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix, transactionSynchronizer: releaseBeforeCommit }),
    ];
    try {
      expect(await hammer(apps, 'broken')).toBeLessThan(total);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  it('plain TypeORM without the integration: the lock encloses dataSource.transaction', async () => {
    const app = await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix });
    try {
      const { dataSource, counters } = app;
      await counters.reset('plain');
      const increment = (): Promise<void> =>
        counters.locks.withLock('counter:plain', { waitMs: 60_000 }, () =>
          dataSource.transaction(async (em) => {
            const row = await em.findOneByOrFail(Counter, { id: 'plain' });
            await new Promise((resolve) => setTimeout(resolve, 3));
            await em.update(Counter, { id: 'plain' }, { value: row.value + 1 });
          }),
        );
      await Promise.all(
        Array.from({ length: LOOPS_PER_APP * 2 }, async () => {
          for (let i = 0; i < ITERATIONS; i++) await increment();
        }),
      );
      expect(await counters.value('plain')).toBe(total);
    } finally {
      await app.close();
    }
  });
});
