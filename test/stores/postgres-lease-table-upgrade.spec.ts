import { randomBytes } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { LockStoreUnavailableError, PostgresLockStore, postgresLockMigration, type PostgresPool } from '../../lib/index';
import { openPostgresTestDatabase, withSearchPath, type PostgresTestDatabase } from './postgres-test-database';

/**
 * A lease table made by a version before read/write locks and semaphores (no `shared` column, no
 * functions), met by this one: brought up to date on first use when the role may, and otherwise a clear
 * answer naming the migration, never a stuck table or a bare SQLSTATE.
 */
describe('a lease table made by an earlier version', () => {
  let db: PostgresTestDatabase;
  let schema: string;
  const table = (): string => `"${schema}"."distributed_locks"`;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
  });
  afterAll(async () => {
    await db?.stop();
  });
  beforeEach(async () => {
    schema = `${db.schema}_${randomBytes(3).toString('hex')}`;
    await db.admin.query(`CREATE SCHEMA "${schema}"`);
    await db.admin.query(`CREATE SEQUENCE "${schema}"."distributed_locks_fence_seq" AS bigint`);
    await db.admin.query(`CREATE TABLE ${table()} (
      name text PRIMARY KEY, token text, fence bigint NOT NULL, holder text NOT NULL, acquired_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL, CONSTRAINT "distributed_locks_grant_key" UNIQUE (name, fence)) WITH (fillfactor = 50)`);
    await db.admin.query(`INSERT INTO ${table()} VALUES ('held', 'token-old', 7, 'old pod', now(), now() + interval '1 hour')`);
  });
  afterEach(async () => {
    await db.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  const migrationCause = (error: unknown): string => {
    expect(error).toBeInstanceOf(LockStoreUnavailableError);
    const cause = String((error as Error).cause);
    expect(cause).toContain('postgresLockMigration');
    return cause;
  };

  it('is brought up to date on first use, keeping its leases, and names the migration with createTable: false', async () => {
    const untouched = await PostgresLockStore.create({ connection: db.url, schema, keyPrefix: '', createTable: false });
    const refused = await untouched.acquireShared('report', { mode: 'read' }, 'token-1', 10_000, 'pod').catch((e: unknown) => e);
    await untouched.close();
    migrationCause(refused);

    const store = await PostgresLockStore.create({ connection: db.url, schema, keyPrefix: '' });
    try {
      expect(await store.acquireShared('report', { mode: 'read' }, 'token-1', 10_000, 'pod')).toMatchObject({ acquired: true });
      expect(await store.inspect('held')).toMatchObject({ fencingToken: 7, holder: 'old pod' });
      expect(await store.release('held', 'token-old', 0)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('names the migration (and the refusal) to a role with only the documented grants, and works once the owner ran it', async () => {
    const role = `lock_app_${randomBytes(3).toString('hex')}`;
    const password = randomBytes(9).toString('hex');
    await db.admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await db.admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
    await db.admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table()} TO ${role}`);
    await db.admin.query(`GRANT USAGE, UPDATE ON SEQUENCE "${schema}"."distributed_locks_fence_seq" TO ${role}`);
    const url = new URL(withSearchPath(db.server.url, schema));
    url.username = role;
    url.password = password;
    try {
      // createTable is left at its default (true), as most applications leave it.
      const app = await PostgresLockStore.create({ connection: url.toString(), schema, keyPrefix: '' });
      const refused = await app.acquire('job', 'token-1', 10_000, 'pod').catch((e: unknown) => e);
      await app.close();
      expect(migrationCause(refused)).toContain('42501');

      await db.admin.query(postgresLockMigration({ schema }));
      const upgraded = await PostgresLockStore.create({ connection: url.toString(), schema, keyPrefix: '' });
      try {
        expect(await upgraded.acquire('job', 'token-1', 10_000, 'pod')).toMatchObject({ acquired: true });
        expect(await upgraded.acquireShared('report', { permits: 2 }, 'token-2', 10_000, 'pod')).toMatchObject({ acquired: true });
        expect(await upgraded.release('report', 'token-2', 0)).toBe(true);
      } finally {
        await upgraded.close();
      }
    } finally {
      await db.admin.query(`DROP OWNED BY ${role}`);
      await db.admin.query(`DROP ROLE ${role}`);
    }
  });

  it('gives the upgrade up after a short lock wait instead of freezing the table behind it, and does not retry it on every call', async () => {
    // A pool handed in, without statement_timeout (as behind PgBouncer): nothing but the store bounds the DDL.
    const pool = new Pool({ connectionString: withSearchPath(db.server.url, schema), max: 4 });
    let ddlCheckouts = 0;
    const counting: PostgresPool = {
      query: (text, values) => pool.query(text, values),
      connect: () => {
        ddlCheckouts++;
        return pool.connect();
      },
      end: () => pool.end(),
      options: pool.options,
    };
    const reader: PoolClient = await db.admin.connect();
    const store = await PostgresLockStore.create({ connection: counting, schema, keyPrefix: '' });
    try {
      // A long transaction that read the table holds ACCESS SHARE on it until it ends.
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${table()}`);

      const refused = await store.acquire('job', 'token-1', 10_000, 'pod').catch((e: unknown) => e);
      expect(migrationCause(refused)).toContain('55P03');
      // The table answers everyone else meanwhile: no ALTER waits in its lock queue.
      await expect(pool.query(`SELECT name FROM ${table()} WHERE name = 'held'`)).resolves.toMatchObject({ rowCount: 1 });
      // The next call answers the same without trying the DDL again.
      const again = await store.acquire('job', 'token-1', 10_000, 'pod').catch((e: unknown) => e);
      expect(migrationCause(again)).toContain('55P03');
      expect(ddlCheckouts).toBe(1);

      await reader.query('COMMIT');
      const later = await PostgresLockStore.create({ connection: counting, schema, keyPrefix: '' });
      try {
        expect(await later.acquire('job', 'token-1', 10_000, 'pod')).toMatchObject({ acquired: true });
        expect(await later.inspect('held')).toMatchObject({ fencingToken: 7 });
      } finally {
        await later.close();
      }
    } finally {
      await reader.query('ROLLBACK').catch(() => undefined);
      reader.release();
      await store.close();
      await pool.end();
    }
  });
});
