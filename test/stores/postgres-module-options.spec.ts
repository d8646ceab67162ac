import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'pg';
import { LockConfigError, PostgresLockStore, type LockModuleOptions } from '../../lib/index';
import { moduleStartError } from '../support/module-start';
import { createLockApp } from '../support/lock-app';
import { openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';


describe("store: 'postgres' module option", () => {
  let db: PostgresTestDatabase;
  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
  });
  afterAll(() => db.stop());

  it.each([
    ['missing', { store: 'postgres' }],
    ['a number', { store: 'postgres', postgres: 5432 }],
    ['another scheme', { store: 'postgres', postgres: 'mysql://app:hunter2@db:3306/app' }],
    ['a libpq key=value string', { store: 'postgres', postgres: 'host=db user=app password=hunter2' }],
    ['a URL of another scheme with the password in its query', { store: 'postgres', postgres: 'postgresx://db/app?password=hunter2' }],
    ['a URL with a slash in its password', { store: 'postgres', postgres: 'mysql://app:hun/ter2@db/app' }],
  ])('rejects a `postgres` option that is %s at startup with LockConfigError naming it, never showing a password', async (_, options) => {
    const error = await moduleStartError(options as LockModuleOptions);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as LockConfigError).option).toBe('postgres');
    expect((error as Error).message).toContain('"postgres"');
    expect((error as Error).message).not.toMatch(/hunter2|ter2/);
  });

  it('masks the whole of a connection string it refuses for the store built by hand, for the pool and for listen', async () => {
    const pool = await PostgresLockStore.create({ connection: 'user=app password=hunter2 host=db' }).catch((e: unknown) => e);
    expect(pool).toMatchObject({ option: 'connection', message: expect.stringContaining('"***"') });
    expect((pool as Error).message).not.toContain('hunter2');
    const listen = await PostgresLockStore.create({ connection: db.url, listen: 'dbname=app password=hunter2' }).catch((e: unknown) => e);
    expect(listen).toMatchObject({ option: 'listen', message: expect.stringContaining('"***"') });
    expect((listen as Error).message).not.toContain('hunter2');
  });

  it('rejects a bad schema or table of a store built by hand, naming the option', async () => {
    await expect(PostgresLockStore.create({ connection: db.url, table: 'Locks; DROP TABLE x' })).rejects.toMatchObject({ option: 'table' });
    await expect(PostgresLockStore.create({ connection: db.url, schema: '' })).rejects.toMatchObject({ option: 'schema' });
  });

  it('locks with a URL, with pool settings, and with a pg.Pool it leaves open', async () => {
    const pool = new Pool({ connectionString: db.url });
    try {
      for (const postgres of [db.url, { connectionString: db.url, max: 2 }, pool]) {
        const app = await createLockApp({ store: 'postgres', postgres, keyPrefix: 'options:' });
        await app.locks.withLock('k', async (lease) => expect(lease.fencingToken).toBeGreaterThan(0));
        await app.close();
      }
      await expect(pool.query('SELECT 1')).resolves.toBeDefined();
    } finally {
      await pool.end();
    }
  });

  it('does not load pg unless the PostgreSQL store is chosen, and says what to install when it is missing', () => {
    const child = spawnSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), join(__dirname, 'postgres-without-pg.script.ts')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout.trim())).toEqual({ memoryStore: 'locked', pgLoaded: false, postgresStore: expect.stringContaining('npm install pg') });
  });

  it('keeps the key of a released minHoldMs lease until the minimum hold is over (cron de-duplication)', async () => {
    const app = await createLockApp({ store: 'postgres', postgres: db.url, keyPrefix: 'api:' });
    try {
      const lease = await app.locks.acquire('order:1', { minHoldMs: 5_000 });
      await lease.release();
      expect(await app.locks.tryAcquire('order:1')).toBeNull();
      expect(await app.store.inspect('order:1')).toMatchObject({ fencingToken: lease.fencingToken });
    } finally {
      await app.close();
    }
  });
});
