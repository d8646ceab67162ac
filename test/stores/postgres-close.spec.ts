import { PostgresLockStore } from '../../lib/index';
import { eventually, openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';

describe('PostgresLockStore close', () => {
  let db: PostgresTestDatabase;
  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
  });
  afterAll(() => db.stop());

  it('stops a sweep after the batch it is in when the store closes, instead of running every batch first', async () => {
    // A long statement timeout: the batch below waits on a table lock, which must not cancel it.
    const store = await PostgresLockStore.create({ connection: db.url, commandTimeoutMs: 30_000, sweep: { retainMs: 0, everyMs: 3_600_000 } });
    expect(await store.purgeExpired()).toBe(0);
    await db.admin.query(
      `INSERT INTO distributed_locks (name, token, fence, holder, acquired_at, expires_at)
       SELECT 'old:' || i, NULL, i, 'pod', now() - interval '1 hour', now() - interval '1 hour' FROM generate_series(1, 2500) AS i`,
    );
    const blocker = await db.admin.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE distributed_locks IN EXCLUSIVE MODE');
      const purging = store.purgeExpired();
      await eventually(async () => {
        const { rows } = await db.admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM %distributed_locks%'`,
        );
        return rows[0].n === 1;
      }, 'the first sweep batch to wait for the table lock');
      const closed = store.close();
      await blocker.query('COMMIT');
      await closed;
      expect(await purging).toBe(1_000);
    } finally {
      blocker.release();
    }
    const { rows } = await db.admin.query(`SELECT count(*)::int AS n FROM distributed_locks`);
    expect(rows[0].n).toBe(1_500);
  });
});
