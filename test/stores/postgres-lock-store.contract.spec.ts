import { Pool, type PoolConfig } from 'pg';
import {
  LockStoreUnavailableError,
  PostgresLockStore,
  postgresLockMigration,
  type PostgresPool,
  type PostgresPoolConfig,
} from '../../lib/index';
import { freePort } from '../../scripts/servers/redis-server';
import { describeLockStoreContract } from './lock-store.contract';
import { describeSharedLockStoreContract } from './shared-lock-store.contract';
import { eventually, openPostgresTestDatabase, withSearchPath, type PostgresTestDatabase } from './postgres-test-database';

let db: PostgresTestDatabase;
beforeAll(async () => {
  db = await openPostgresTestDatabase(__filename);
});
afterAll(() => db.stop());

// node-postgres' own types fit the store's structural ones (this file is type-checked by `npm test`).
const fitsPool = (pool: Pool): PostgresPool => pool;
const fitsConfig = (config: PoolConfig): PostgresPoolConfig => config;
void fitsPool;
void fitsConfig;

describeLockStoreContract('PostgresLockStore', async () => ({
  store: await PostgresLockStore.create({ connection: db.url, keyPrefix: 'contract:', commandTimeoutMs: 5_000 }),
}));

describeSharedLockStoreContract('PostgresLockStore', async () => ({
  store: await PostgresLockStore.create({ connection: db.url, keyPrefix: 'shared-contract:', commandTimeoutMs: 5_000 }),
}));

describe('PostgresLockStore set-up', () => {
  const rows = async (schema: string, table = 'distributed_locks'): Promise<number> =>
    Number((await db.admin.query(`SELECT count(*) AS n FROM "${schema}"."${table}"`)).rows[0].n);

  it('creates its table on first use, also when several instances start at once', async () => {
    const schema = `${db.schema}_first_use`;
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => PostgresLockStore.create({ connection: db.url, schema, commandTimeoutMs: 10_000 })),
    );
    try {
      const results = await Promise.all(stores.map((store, i) => store.acquire('job', `token-${i}`, 10_000, `pod-${i}`)));
      expect(results.filter((result) => result.acquired)).toHaveLength(1);
      expect(await rows(schema)).toBe(1);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await db.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('runs on a schema made by the exported migration and never issues DDL itself with createTable: false', async () => {
    const schema = `${db.schema}_migrated`;
    const missing = await PostgresLockStore.create({ connection: db.url, schema, createTable: false });
    const error = await missing.acquire('job', 'token-1', 10_000, 'pod').catch((e: unknown) => e);
    await missing.close();
    expect(error).toBeInstanceOf(LockStoreUnavailableError);
    expect((error as Error).message).toContain('postgresLockMigration');

    await db.admin.query(postgresLockMigration({ schema, table: 'app_locks' }));
    await db.admin.query(postgresLockMigration({ schema, table: 'app_locks' })); // idempotent
    const store = await PostgresLockStore.create({ connection: db.url, schema, table: 'app_locks', createTable: false });
    try {
      expect(await store.acquire('job', 'token-1', 10_000, 'pod')).toMatchObject({ acquired: true });
      expect(await rows(schema, 'app_locks')).toBe(1);
    } finally {
      await store.close();
      await db.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('leaves a pool handed in open, and takes no pool connection for its LISTEN', async () => {
    const pool = new Pool({ connectionString: db.url, max: 3 });
    const store = await PostgresLockStore.create({ connection: pool, keyPrefix: 'reused:' });
    try {
      await store.acquire('k', 'token-1', 10_000, 'pod');
      const stop = await store.onRelease('k', () => undefined);
      expect(pool.totalCount).toBeLessThanOrEqual(1);
      stop();
      await store.close();
      await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await pool.end();
    }
  });

  it('deletes rows that ended (released or expired) so distinct keys do not pile up, and keeps held ones', async () => {
    const schema = `${db.schema}_sweep`;
    const store = await PostgresLockStore.create({ connection: db.url, schema, sweep: { retainMs: 0, everyMs: 3_600_000 } });
    const count = (): Promise<number> => rows(schema);
    try {
      for (let i = 0; i < 300; i++) {
        await store.acquire(`job:${i}`, `token-${i}`, 10_000, 'pod');
        if (i % 3 !== 0) await store.release(`job:${i}`, `token-${i}`, 0);
      }
      await store.acquire('expired', 'token-x', 10, 'pod');
      await eventually(async () => (await store.inspect('expired')) === null, 'the short lease to run out');
      expect(await count()).toBe(301);
      expect(await store.purgeExpired()).toBe(201);
      expect(await count()).toBe(100);
      expect((await store.list('job:*')).length).toBe(100);
    } finally {
      await store.close();
      await db.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('sweeps on its own, started by acquisitions, and the next grant of a swept key still gets a greater token', async () => {
    const store = await PostgresLockStore.create({ connection: db.url, keyPrefix: 'autosweep:', sweep: { retainMs: 0, everyMs: 0 } });
    const count = async (): Promise<number> =>
      Number((await db.admin.query(`SELECT count(*) AS n FROM distributed_locks WHERE name LIKE 'autosweep:%'`)).rows[0].n);
    try {
      const first = await store.acquire('job', 'token-1', 10_000, 'pod');
      await store.release('job', 'token-1', 0);
      // Every acquisition, granted or not, may start a sweep (one at a time).
      await eventually(async () => {
        await store.acquire('other', 'token-2', 10_000, 'pod');
        return (await count()) === 1;
      }, 'the released row to be swept');
      const next = await store.acquire('job', 'token-3', 10_000, 'pod');
      expect(first.acquired && next.acquired && next.fencingToken > first.fencingToken).toBe(true);
    } finally {
      await store.close();
    }
  });
});

describe('PostgresLockStore failures', () => {
  it('fails closed, naming host:port and the reason but never the password, when the database does not answer', async () => {
    const port = await freePort();
    const store = await PostgresLockStore.create({ connection: `postgres://app:s3cret-pw@127.0.0.1:${port}/app`, commandTimeoutMs: 2_000 });
    try {
      const error = await store.acquire('payment', 'token-1', 10_000, 'pod').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      const text = `${(error as Error).message} ${String((error as Error).cause)} ${JSON.stringify(error)}`;
      expect(text).toContain(`127.0.0.1:${port}`);
      expect(text).toContain('ECONNREFUSED');
      expect(text).not.toContain('s3cret-pw');
      await expect(store.ping()).rejects.toBeInstanceOf(LockStoreUnavailableError);
      await expect(store.onRelease('payment', () => undefined)).rejects.toBeInstanceOf(LockStoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it('cleans up an acquire whose answer came too late: the key is not left held for the whole lease', async () => {
    // A pool without a statement timeout, so the acquire waits on a row lock past the store's deadline.
    const pool = new Pool({ connectionString: db.url });
    const blocker = await pool.connect();
    const store = await PostgresLockStore.create({ connection: pool, keyPrefix: 'late:', commandTimeoutMs: 200 });
    try {
      const first = await store.acquire('slow', 'token-0', 10_000, 'pod');
      await store.release('slow', 'token-0', 0);
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM distributed_locks WHERE name = 'late:slow' FOR UPDATE`);
      const timedOut = await store.acquire('slow', 'token-1', 600_000, 'pod').catch((e: unknown) => e);
      expect(timedOut).toBeInstanceOf(LockStoreUnavailableError);
      expect((timedOut as Error).message).toContain('no answer within 200 ms');
      await blocker.query('COMMIT');
      // The late grant commits once the row lock is gone, then the clean-up releases it.
      await eventually(async () => {
        const { rows } = await db.admin.query(`SELECT token, fence FROM distributed_locks WHERE name = 'late:slow'`);
        return first.acquired && rows[0].token === null && Number(rows[0].fence) > first.fencingToken;
      }, 'the late grant to be released');
      expect(await store.acquire('slow', 'token-2', 10_000, 'pod')).toMatchObject({ acquired: true });
    } finally {
      blocker.release();
      await store.close();
      await pool.end();
    }
  });

  it('keeps stores on different schemas apart, as different Redis servers are', async () => {
    const elsewhere = withSearchPath(db.server.url, `${db.schema}_elsewhere`);
    await db.admin.query(`CREATE SCHEMA "${db.schema}_elsewhere"`);
    const [a, b] = await Promise.all([
      PostgresLockStore.create({ connection: db.url, keyPrefix: 'paths:' }),
      PostgresLockStore.create({ connection: elsewhere, keyPrefix: 'paths:' }),
    ]);
    try {
      expect(await a.acquire('k', 'token-a', 10_000, 'a')).toMatchObject({ acquired: true });
      expect(await b.acquire('k', 'token-b', 10_000, 'b')).toMatchObject({ acquired: true });
    } finally {
      await a.close();
      await b.close();
      await db.admin.query(`DROP SCHEMA "${db.schema}_elsewhere" CASCADE`);
    }
  });
});
