import { randomBytes } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { assertLeaseHeld, LeaseLostError, PostgresLockStore, type Lease } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { eventually, openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';

/**
 * The recipe only a lock in the business database can offer: the lease check and the business write in
 * one transaction. A holder whose lease ended (paused, partitioned, replaced) cannot commit a write, and
 * while a transaction that checked its lease is open, nobody can take the key over.
 */
describe('fencing and the business write in one PostgreSQL transaction', () => {
  const prefix = `fenced:${randomBytes(3).toString('hex')}:`;
  const applicationName = `fenced-spec-${randomBytes(3).toString('hex')}`;
  let db: PostgresTestDatabase;
  let pool: Pool;
  let first: LockApp;
  let second: LockApp;

  const status = async (id: string): Promise<{ status: string; paid_by: string | null; last_fence: string }> =>
    (await db.admin.query(`SELECT status, paid_by, last_fence FROM orders WHERE id = $1`, [id])).rows[0];

  /** The business code: pay an order inside a transaction, proving the lease first. */
  async function pay(lease: Lease, id: string, by: string): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await assertLeaseHeld(client, first.store as PostgresLockStore, lease);
      await client.query(`UPDATE orders SET status = 'paid', paid_by = $2 WHERE id = $1`, [id, by]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /** Until a statement of the apps' pool waits for a row lock (the checked lease row). */
  const waitingOnTheLeaseRow = (who: string): Promise<void> =>
    eventually(async () => {
      const { rows } = await db.admin.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [applicationName]);
      return rows.length > 0;
    }, `${who} to wait on the lease row`);

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    await db.admin.query(`CREATE TABLE orders (id text PRIMARY KEY, status text NOT NULL, paid_by text, last_fence bigint NOT NULL DEFAULT 0)`);
    pool = new Pool({ connectionString: db.url, max: 4 });
    const options = { store: 'postgres', postgres: { connectionString: db.url, application_name: applicationName }, keyPrefix: prefix } as const;
    [first, second] = await Promise.all([createLockApp(options), createLockApp(options)]);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await pool?.end();
    await db?.stop();
  });
  beforeEach(async () => {
    await db.admin.query(`TRUNCATE orders`);
    await db.admin.query(`INSERT INTO orders (id, status) VALUES ('o1', 'open')`);
  });

  it('refuses the write of a holder whose lease ran out and was taken over, rolling its transaction back', async () => {
    // A holder that stopped renewing (paused past its lease): the store lets its lease run out.
    const stale = await first.locks.acquire('order:o1', { leaseMs: 200, autoRenew: false });
    await eventually(async () => (await first.store.inspect('order:o1')) === null, 'the lease to run out');
    const current = await second.locks.acquire('order:o1');
    expect(current.fencingToken).toBeGreaterThan(stale.fencingToken);

    const refused = await pay(stale, 'o1', 'stale holder').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LeaseLostError);
    expect(await status('o1')).toMatchObject({ status: 'open', paid_by: null });

    await pay(current, 'o1', 'current holder');
    expect(await status('o1')).toMatchObject({ status: 'paid', paid_by: 'current holder' });
    await current.release();
  });

  it('makes a takeover wait for the COMMIT of a transaction that checked the lease, while renewals go through', async () => {
    const store = first.store as PostgresLockStore;
    const held = await store.acquire('order:o1', 'token-first', 300, 'first');
    if (!held.acquired) throw new Error('key should be free');
    const client: PoolClient = await pool.connect();
    try {
      await client.query('BEGIN');
      await assertLeaseHeld(client, store, { key: 'order:o1', fencingToken: held.fencingToken });
      // The holder's own renewal is not blocked by its transaction.
      expect(await store.renew([{ key: 'order:o1', token: 'token-first', leaseMs: 300 }])).toEqual([true]);
      await eventually(async () => (await store.inspect('order:o1')) === null, 'the lease to run out');

      let settled = false;
      const takeover = (second.store as PostgresLockStore).acquire('order:o1', 'token-second', 10_000, 'second').finally(() => (settled = true));
      await waitingOnTheLeaseRow('the takeover');
      await client.query(`UPDATE orders SET status = 'paid', paid_by = 'first' WHERE id = 'o1'`);
      expect(settled).toBe(false);
      await client.query('COMMIT');

      const granted = await takeover;
      expect(granted).toMatchObject({ acquired: true });
      expect(granted.acquired && granted.fencingToken > held.fencingToken).toBe(true);
      expect(await status('o1')).toMatchObject({ status: 'paid', paid_by: 'first' });
      await second.store.release('order:o1', 'token-second', 0);
    } finally {
      client.release();
    }
  });

  it('proves a reader’s own hold in the transaction, refuses one whose lease ran out, and turns a writer away until COMMIT', async () => {
    const store = first.store as PostgresLockStore;
    const stale = await first.locks.acquire('report:r1', { mode: 'read', leaseMs: 200, autoRenew: false });
    await eventually(async () => (await store.inspect('report:r1')) === null, 'the read lease to run out');
    const reader = await store.acquireShared('report:r1', { mode: 'read' }, 'token-reader', 10_000, 'first');
    const other = await store.acquireShared('report:r1', { mode: 'read' }, 'token-other', 10_000, 'first');
    if (!reader.acquired || !other.acquired) throw new Error('readers should share the key');
    await expect(pay(stale, 'o1', 'stale reader')).rejects.toBeInstanceOf(LeaseLostError);

    const client: PoolClient = await pool.connect();
    try {
      await client.query('BEGIN');
      await assertLeaseHeld(client, store, { key: 'report:r1', fencingToken: reader.fencingToken });
      // The readers' own renewals and releases change no key column: the check does not hold them up.
      expect(await store.renew([{ key: 'report:r1', token: 'token-reader', leaseMs: 10_000 }])).toEqual([true]);
      expect(await store.release('report:r1', 'token-other', 0)).toBe(true);
      expect(await store.release('report:r1', 'token-reader', 0)).toBe(true);

      // A writer's grant would move the fence the check pins: it is turned away until the COMMIT.
      const writer = second.store as PostgresLockStore;
      expect(await writer.acquireShared('report:r1', { mode: 'write' }, 'token-writer', 10_000, 'second')).toMatchObject({ acquired: false });
      await client.query('COMMIT');
      const granted = await writer.acquireShared('report:r1', { mode: 'write' }, 'token-writer', 10_000, 'second');
      expect(granted.acquired && granted.fencingToken > other.fencingToken).toBe(true);
      await second.store.release('report:r1', 'token-writer', 0);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  });

  it('turns a new reader away while another reader’s checked transaction is open, without holding up the readers’ renewals and releases', async () => {
    const store = first.store as PostgresLockStore;
    // A pool without statement_timeout (as behind PgBouncer): nothing would cut a statement stuck on the row.
    const bare = await PostgresLockStore.create({ connection: pool, keyPrefix: prefix });
    const client: PoolClient = await db.admin.connect();
    try {
      const a = await store.acquireShared('report:r2', { mode: 'read' }, 'token-a', 10_000, 'first');
      const c = await store.acquireShared('report:r2', { mode: 'read' }, 'token-c', 10_000, 'first');
      if (!a.acquired || !c.acquired) throw new Error('readers should share the key');
      await client.query('BEGIN');
      await assertLeaseHeld(client, store, { key: 'report:r2', fencingToken: a.fencingToken });
      // A grant moves the row's fence, which the check pins: the new reader is told to come back, and
      // holds no row lock meanwhile that the other readers' renewals and releases would queue behind.
      expect(await bare.acquireShared('report:r2', { mode: 'read' }, 'token-b', 10_000, 'second')).toMatchObject({ acquired: false });
      expect(await bare.renew([{ key: 'report:r2', token: 'token-c', leaseMs: 10_000 }])).toEqual([true]);
      expect(await bare.release('report:r2', 'token-c', 0)).toBe(true);
      await client.query('COMMIT');

      const b = await bare.acquireShared('report:r2', { mode: 'read' }, 'token-b', 10_000, 'second');
      expect(b.acquired && b.fencingToken > c.fencingToken).toBe(true);
      expect(await bare.release('report:r2', 'token-b', 0)).toBe(true);
      expect(await store.release('report:r2', 'token-a', 0)).toBe(true);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
      await bare.close();
    }
  });

  it('writes nothing for a stale grant with the single-statement forms: the lease check in the UPDATE, or a fence column', async () => {
    const store = first.store as PostgresLockStore;
    const stale = await first.locks.acquire('order:o1', { leaseMs: 200, autoRenew: false });
    await eventually(async () => (await store.inspect('order:o1')) === null, 'the lease to run out');
    const current = await second.locks.acquire('order:o1');

    // The lease row's check inside the business statement (docs/stores.md).
    const guarded = (lease: Lease) =>
      pool.query(
        `UPDATE orders SET status = 'paid', paid_by = $2 WHERE id = $1 AND EXISTS (
           SELECT 1 FROM distributed_locks l WHERE l.name = $3 AND l.fence = $4 AND l.token IS NOT NULL
             AND l.expires_at > clock_timestamp() FOR KEY SHARE)`,
        ['o1', `holder ${lease.fencingToken}`, `${prefix}${lease.key}`, lease.fencingToken],
      );
    expect((await guarded(stale)).rowCount).toBe(0);
    expect((await guarded(current)).rowCount).toBe(1);

    // The fence kept on the business row (works even when the locks live in another database).
    const fenced = (lease: Lease) =>
      pool.query(`UPDATE orders SET last_fence = $2, status = 'shipped' WHERE id = $1 AND last_fence < $2`, ['o1', lease.fencingToken]);
    expect((await fenced(current)).rowCount).toBe(1);
    expect((await fenced(stale)).rowCount).toBe(0);
    expect(await status('o1')).toMatchObject({ status: 'shipped', paid_by: `holder ${current.fencingToken}`, last_fence: String(current.fencingToken) });
    await current.release();
    await expect(stale.release()).rejects.toBeInstanceOf(LeaseLostError);
  });
});
