import { drizzle } from 'drizzle-orm/node-postgres';
import { and, eq } from 'drizzle-orm';
import { bigint, pgTable, text } from 'drizzle-orm/pg-core';
import { Pool, type PoolClient } from 'pg';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import {
  fencedSqlUpdate,
  MemoryLockStore,
  onStaleFencingToken,
  StaleFencingTokenError,
  type FencedBy,
  type StaleFencingTokenEvent,
} from 'nestjs-distributed-lock';
import { fencedDrizzleUpdate } from 'nestjs-distributed-lock/fencing/drizzle';
import { fencedTypeOrmUpdate } from 'nestjs-distributed-lock/fencing/typeorm';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';

@Entity('fenced_rows')
class FencedRow {
  @PrimaryColumn('text')
  id!: string;

  @Column('text', { nullable: true })
  value!: string | null;

  @Column('bigint', { name: 'fence', nullable: true })
  lastFencingToken!: string | null;
}

const fencedRows = pgTable('fenced_rows', {
  id: text('id').primaryKey(),
  value: text('value'),
  fence: bigint('fence', { mode: 'number' }),
});

/** The one write every helper performs: set `value` on row `id`, optionally only if `value` still equals `expect`. */
interface Write {
  readonly id: string;
  readonly value: string;
  readonly expect?: string;
  readonly fencedBy: FencedBy;
}

/** How one helper writes through a client already inside a transaction. */
interface Helper {
  readonly name: string;
  write(client: PoolClient, write: Write): Promise<number>;
}

let postgres: PostgresServer;
let pool: Pool;
let dataSource: DataSource;

const helpers: Helper[] = [
  {
    name: 'plain SQL (pg)',
    write: (client, w) =>
      fencedSqlUpdate(client, {
        table: 'fenced_rows',
        fenceColumn: 'fence',
        set: { value: w.value },
        where: { id: w.id },
        expect: w.expect === undefined ? {} : { value: w.expect },
        fencedBy: w.fencedBy,
      }),
  },
  {
    name: 'TypeORM (EntityManager)',
    // TypeORM opens its own transaction on its own pool: the client argument is not used, and the helper's
    // queries run in that transaction.
    write: (_client, w) =>
      dataSource.transaction((manager) =>
        fencedTypeOrmUpdate(manager, {
          entity: FencedRow,
          fenceProperty: 'lastFencingToken',
          set: { value: w.value },
          where: { id: w.id },
          expect: w.expect === undefined ? {} : { value: w.expect },
          fencedBy: w.fencedBy,
        }),
      ),
  },
  {
    name: 'Drizzle (node-postgres)',
    write: (client, w) =>
      fencedDrizzleUpdate(drizzle(client), {
        table: fencedRows,
        fence: fencedRows.fence,
        set: { value: w.value },
        where: eq(fencedRows.id, w.id),
        expect: w.expect === undefined ? undefined : eq(fencedRows.value, w.expect),
        fencedBy: w.fencedBy,
      }),
  },
];

/** Runs one helper's write in its own transaction, committed when it resolves, rolled back when it throws. */
async function write(helper: Helper, w: Write): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const written = await helper.write(client, w);
    await client.query('COMMIT');
    return written;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

async function row(id: string): Promise<{ value: string | null; fence: number | null } | undefined> {
  const { rows } = await pool.query<{ value: string | null; fence: string | null }>('SELECT value, fence FROM fenced_rows WHERE id = $1', [id]);
  return rows[0] && { value: rows[0].value, fence: rows[0].fence === null ? null : Number(rows[0].fence) };
}

/** Two real grants for one key from the memory store: the second one's token is newer. */
async function twoGrants(key: string): Promise<[{ key: string; fencingToken: number }, { key: string; fencingToken: number }]> {
  const store = new MemoryLockStore({ keyPrefix: `fencing-spec:${Math.random()}:` });
  const first = await store.acquire(key, 'token-a', 10_000, 'instance-a');
  await store.forceRelease(key);
  const second = await store.acquire(key, 'token-b', 10_000, 'instance-b');
  if (!first.acquired || !second.acquired) throw new Error('the memory store refused a free key');
  return [
    { key, fencingToken: first.fencingToken },
    { key, fencingToken: second.fencingToken },
  ];
}

beforeAll(async () => {
  postgres = await startPostgresServer();
  pool = new Pool({ connectionString: postgres.url, max: 12 });
  await pool.query(`CREATE TABLE IF NOT EXISTS fenced_rows (id text PRIMARY KEY, value text, fence bigint)`);
  // Every applied write, in commit-visible order: what "no older token ever lands after a newer one" is checked on.
  await pool.query(`CREATE TABLE IF NOT EXISTS fence_history (seq bigserial PRIMARY KEY, id text, fence bigint)`);
  await pool.query(`
    CREATE OR REPLACE FUNCTION record_fence() RETURNS trigger AS $$
    BEGIN INSERT INTO fence_history (id, fence) VALUES (NEW.id, NEW.fence); RETURN NEW; END $$ LANGUAGE plpgsql`);
  await pool.query(`CREATE OR REPLACE TRIGGER fence_history AFTER UPDATE ON fenced_rows FOR EACH ROW EXECUTE FUNCTION record_fence()`);
  dataSource = new DataSource({ type: 'postgres', url: postgres.url, entities: [FencedRow], synchronize: false });
  await dataSource.initialize();
});

afterAll(async () => {
  await dataSource?.destroy();
  // pg-pool's end() resolves before its sockets have closed; the server's shutdown notice may still reach
  // one of them, and is no failure of this file.
  pool?.on('error', () => undefined);
  await pool?.end();
  await postgres?.stop();
});

describe.each(helpers)('fenced update: $name on real PostgreSQL', (helper) => {
  let seq = 0;
  const newRow = async (fence: number | null, value = 'initial'): Promise<string> => {
    const id = `${helper.name}:${++seq}`;
    await pool.query('INSERT INTO fenced_rows (id, value, fence) VALUES ($1, $2, $3)', [id, value, fence]);
    return id;
  };

  it('applies a write on a row that carries no token yet, and stores the token with it', async () => {
    const id = await newRow(null);
    const [lease] = await twoGrants('first-write');
    expect(await write(helper, { id, value: 'written', fencedBy: lease })).toBe(1);
    expect(await row(id)).toEqual({ value: 'written', fence: lease.fencingToken });
  });

  it('applies a write carrying a newer token than the row holds', async () => {
    const [older, newer] = await twoGrants('newer-write');
    const id = await newRow(older.fencingToken);
    expect(await write(helper, { id, value: 'newer', fencedBy: newer.fencingToken })).toBe(1);
    expect(await row(id)).toEqual({ value: 'newer', fence: newer.fencingToken });
  });

  it("refuses the paused holder's late write with StaleFencingTokenError, leaving the newer holder's write", async () => {
    const [paused, takeover] = await twoGrants('order:late');
    const id = await newRow(null);
    const refusals: StaleFencingTokenEvent[] = [];
    const stopListening = onStaleFencingToken((event) => refusals.push(event));
    try {
      expect(await write(helper, { id, value: 'takeover', fencedBy: takeover })).toBe(1);
      const late = write(helper, { id, value: 'late', fencedBy: paused });
      await expect(late).rejects.toThrow(StaleFencingTokenError);
      const error = (await late.catch((e: unknown) => e)) as StaleFencingTokenError;
      expect(error).toMatchObject({
        code: 'STALE_FENCING_TOKEN',
        resource: 'fenced_rows',
        fencingToken: paused.fencingToken,
        currentFencingToken: takeover.fencingToken,
        lockKey: 'order:late',
      });
      expect(refusals).toEqual([
        expect.objectContaining({ resource: 'fenced_rows', fencingToken: paused.fencingToken, lockKey: 'order:late' }),
      ]);
    } finally {
      stopListening();
    }
    expect(await row(id)).toEqual({ value: 'takeover', fence: takeover.fencingToken });
  });

  it('lets the same lease write a row twice, and refuses only an older token after a newer one', async () => {
    const [older, newer] = await twoGrants('same-token');
    const id = await newRow(null);
    expect(await write(helper, { id, value: 'once', fencedBy: older })).toBe(1);
    expect(await write(helper, { id, value: 'twice', fencedBy: older })).toBe(1);
    expect(await row(id)).toEqual({ value: 'twice', fence: older.fencingToken });
    expect(await write(helper, { id, value: 'newer', fencedBy: newer })).toBe(1);
    await expect(write(helper, { id, value: 'late', fencedBy: older })).rejects.toMatchObject({ code: 'STALE_FENCING_TOKEN' });
    expect(await row(id)).toEqual({ value: 'newer', fence: newer.fencingToken });
  });

  it('resolves 0, without a refusal, when no row matches or the compare-and-set condition fails', async () => {
    const [lease] = await twoGrants('no-match');
    expect(await write(helper, { id: 'no-such-row', value: 'x', fencedBy: lease })).toBe(0);
    const id = await newRow(null, 'changed meanwhile');
    expect(await write(helper, { id, value: 'x', expect: 'what I read', fencedBy: lease })).toBe(0);
    expect(await row(id)).toEqual({ value: 'changed meanwhile', fence: null });
  });

  it('whatever order concurrent writers arrive in, no older token ever lands after a newer one', async () => {
    const id = await newRow(null);
    const tokens = Array.from({ length: 16 }, (_, i) => 1_000 + i * 7);
    const shuffled = [...tokens].sort(() => Math.random() - 0.5);
    const outcomes = await Promise.allSettled(shuffled.map((token) => write(helper, { id, value: `v${token}`, fencedBy: token })));
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(StaleFencingTokenError);
    }
    const { rows } = await pool.query<{ fence: string }>('SELECT fence FROM fence_history WHERE id = $1 ORDER BY seq', [id]);
    const history = rows.map((r) => Number(r.fence));
    expect(history.length).toBe(outcomes.filter((o) => o.status === 'fulfilled').length);
    for (let i = 1; i < history.length; i++) expect(history[i]).toBeGreaterThan(history[i - 1]!);
    expect(await row(id)).toEqual({ value: `v${Math.max(...tokens)}`, fence: Math.max(...tokens) });
  });
});

describe('fenced update: bad input is refused before any statement', () => {
  it('names the option for a token no grant could have issued and for a null where value', async () => {
    const client = { query: jest.fn() };
    await expect(
      fencedSqlUpdate(client, { table: 't', fenceColumn: 'fence', set: { v: 1 }, where: { id: 1 }, fencedBy: 0 }),
    ).rejects.toMatchObject({ code: 'LOCK_CONFIG_INVALID', option: 'fencedBy' });
    await expect(
      fencedSqlUpdate(client, { table: 't', fenceColumn: 'fence', set: { v: 1 }, where: { id: null }, fencedBy: 5 }),
    ).rejects.toMatchObject({ code: 'LOCK_CONFIG_INVALID', option: 'where.id' });
    expect(client.query).not.toHaveBeenCalled();
  });
});

/**
 * A filter built from optional request fields can come out empty: TypeORM turns `where: {}` (or every
 * property undefined) into `WHERE 1=1`, and Drizzle's `and()` of nothing is no condition at all. A fenced
 * update without a filter would write every row of the table: refused, as `fencedSqlUpdate` does.
 */
describe('fenced update: an empty filter is refused before any statement, on real PostgreSQL', () => {
  const emptyTypeOrmFilters: Array<[string, unknown]> = [
    ['{}', {}],
    ['every property undefined', { id: undefined }],
    ['an empty list', []],
    ['a list with an empty filter', [{ id: 'x' }, {}]],
  ];
  const emptyDrizzleFilters: Array<[string, unknown]> = [
    ['undefined', undefined],
    ['and() of nothing', and(undefined, undefined)],
  ];

  const untouched = async (): Promise<string> => {
    const id = `empty-filter:${Math.random()}`;
    await pool.query('INSERT INTO fenced_rows (id, value, fence) VALUES ($1, $2, NULL)', [id, 'untouched']);
    return id;
  };

  it.each(emptyTypeOrmFilters)('TypeORM: where %s', async (_name, where) => {
    const id = await untouched();
    const [lease] = await twoGrants('empty-filter');
    const outcome = fencedTypeOrmUpdate(dataSource.manager, {
      entity: FencedRow,
      fenceProperty: 'lastFencingToken',
      set: { value: 'everything' },
      where: where as never,
      fencedBy: lease,
    });
    await expect(outcome).rejects.toMatchObject({ code: 'LOCK_CONFIG_INVALID', option: 'where' });
    expect(await row(id)).toEqual({ value: 'untouched', fence: null });
  });

  it.each(emptyDrizzleFilters)('Drizzle: where %s', async (_name, where) => {
    const id = await untouched();
    const [lease] = await twoGrants('empty-filter');
    const outcome = fencedDrizzleUpdate(drizzle(pool), {
      table: fencedRows,
      fence: fencedRows.fence,
      set: { value: 'everything' },
      where: where as never,
      fencedBy: lease,
    });
    await expect(outcome).rejects.toMatchObject({ code: 'LOCK_CONFIG_INVALID', option: 'where' });
    expect(await row(id)).toEqual({ value: 'untouched', fence: null });
  });
});
