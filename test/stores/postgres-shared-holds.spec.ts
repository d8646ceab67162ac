import { PostgresLockStore } from '../../lib/index';
import { openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';

/** What the lease table keeps of a read/write lock between its holds: the writers waiting for it. */
describe('PostgreSQL read/write lock rows', () => {
  let db: PostgresTestDatabase;
  let store: PostgresLockStore;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    // Every ended row is due for the sweep at once.
    store = await PostgresLockStore.create({ connection: db.url, keyPrefix: 'rw:', sweep: { retainMs: 0, everyMs: 3_600_000 } });
  });
  afterAll(async () => {
    await store?.close();
    await db?.stop();
  });

  it('keeps a waiting writer’s turn through a sweep of the released row, so a new reader does not get in first', async () => {
    expect(await store.acquireShared('report', { mode: 'read' }, 'token-reader', 10_000, 'pod')).toMatchObject({ acquired: true });
    // The writer is turned away and marks the key: readers that come after it wait behind it.
    expect(await store.acquireShared('report', { mode: 'write', waitingMs: 60_000 }, 'token-writer', 10_000, 'pod')).toMatchObject({
      acquired: false,
    });
    expect(await store.release('report', 'token-reader', 0)).toBe(true);

    await store.purgeExpired();
    expect(await store.acquireShared('report', { mode: 'read' }, 'token-late', 10_000, 'pod')).toMatchObject({ acquired: false });
    expect(await store.acquireShared('report', { mode: 'write', waitingMs: 60_000 }, 'token-writer', 10_000, 'pod')).toMatchObject({
      acquired: true,
    });
    expect(await store.release('report', 'token-writer', 0)).toBe(true);
    // Once the writer is gone its mark goes with it, and the row ends like any other.
    expect(await store.acquireShared('report', { mode: 'read' }, 'token-late', 10_000, 'pod')).toMatchObject({ acquired: true });
    expect(await store.release('report', 'token-late', 0)).toBe(true);
    expect(await store.purgeExpired()).toBe(1);
  });
});
