import type { AcquireResult, HeldLock } from '../lock-store.interface.js';
import type { PostgresPool } from './postgres-connection.interface.js';
import type { PostgresLockTable } from './postgres-lock-table.js';

/** One statement and its parameters, to run on the caller's connection. */
export interface SqlStatement {
  readonly text: string;
  readonly values: unknown[];
}

export interface ForceReleaseRow {
  readonly taken: boolean;
  readonly fencingToken: number;
  readonly holder: string;
  readonly ttlMs: number;
}

export interface RenewRow {
  readonly name: string;
  readonly token: string;
  readonly leaseMs: number;
}

/**
 * Every statement of the lease protocol, each a single statement, so it runs through any pool, PgBouncer
 * transaction pooling included (no session state, no named prepared statements, no advisory locks).
 *
 * Times come from the database: `clock_timestamp()` (the time at the row, not the statement's start, so a
 * statement that waited on a row lock judges expiry when it gets the row). A held row has a token and a
 * future `expires_at`; a released one is a tombstone (token NULL) kept until the sweep.
 */
export class PostgresLockQueries {
  private readonly acquireSql: string;
  private readonly releaseSql: string;
  private readonly renewSql: string;
  private readonly inspectSql: string;
  private readonly listSql: string;
  private readonly forceReleaseSql: string;
  private readonly sweepSql: string;
  private readonly leaseCheckSql: string;

  constructor(private readonly table: PostgresLockTable) {
    const t = table.qualified;
    const ms = (param: string): string => `${param}::float8 * interval '1 millisecond'`;
    const ttl = (row: string): string => `ceil(extract(epoch FROM ${row}.expires_at - clock_timestamp()) * 1000)::bigint`;
    // The hybrid fencing clock of the other stores: the sequence, moved up to the database's clock in µs
    // when it is behind. Strictly increasing per key (a takeover also takes the row's fence + 1, under the
    // row lock); durable and in the same WAL as the grant; comparable with tokens from the Redis store, and
    // still increasing after a restored backup or a recreated table as long as the clock is.
    const nextFence = `setval(${table.sequenceLiteral}, greatest(nextval(${table.sequenceLiteral}), (extract(epoch FROM clock_timestamp()) * 1000000)::bigint))`;
    const held = (row: string): string => `${row}.token IS NOT NULL AND ${row}.expires_at > clock_timestamp()`;

    // The NOT EXISTS pre-check reads without locking: a key that is plainly held is denied without taking
    // its row lock or writing anything (ON CONFLICT DO UPDATE locks the row even when its WHERE fails), so
    // polling waiters neither write WAL nor queue behind a transaction that checked the lease. The fence is
    // only computed when the pre-check passes. The INSERT then decides under the row lock: a new key, or a
    // released/expired row taken over. A denial reads the holder's TTL from the statement's snapshot; a row
    // committed after that snapshot reads as no row, and the TTL as unknown (-1).
    this.acquireSql = `WITH granted AS (
  INSERT INTO ${t} AS l (name, token, fence, holder, acquired_at, expires_at)
  SELECT $1::text, $2::text, ${nextFence}, $4::text, clock_timestamp(), clock_timestamp() + ${ms('$3')}
  WHERE NOT EXISTS (SELECT 1 FROM ${t} h WHERE h.name = $1::text AND ${held('h')})
  ON CONFLICT (name) DO UPDATE
    SET token = excluded.token,
        fence = greatest(${nextFence}, l.fence + 1),
        holder = excluded.holder,
        acquired_at = clock_timestamp(),
        expires_at = clock_timestamp() + ${ms('$3')},
        shared = NULL
    WHERE l.token IS NULL OR l.expires_at <= clock_timestamp()
  RETURNING l.fence
)
SELECT fence, NULL::bigint AS ttl_ms FROM granted
UNION ALL
SELECT NULL::bigint, ${ttl('h')} FROM ${t} h
WHERE h.name = $1::text AND ${held('h')} AND NOT EXISTS (SELECT 1 FROM granted)`;

    // Keep ms > 0 (minimum hold): the row stays held, token and all, until then, and nobody is woken.
    // Otherwise it becomes a tombstone and the key's channel is notified (delivered at commit). The notify
    // CTE is volatile, so it is materialised, and counting it runs pg_notify once per released row.
    // A plain release commits without waiting for its WAL flush (synchronous_commit off for this one
    // transaction): losing it in a crash only keeps the key until its lease runs out, and any grant that
    // follows it flushes it first, WAL being sequential. Acquisitions and renewals stay synchronous: losing
    // one of those could let a second holder in.
    this.releaseSql = `WITH relaxed AS (
  SELECT set_config('synchronous_commit', 'off', true) WHERE $3::float8 <= 0
), released AS (
  UPDATE ${t} SET
    token = CASE WHEN $3::float8 > 0 THEN token END,
    expires_at = clock_timestamp() + ${ms('$3')}
  WHERE name = $1::text AND token = $2::text AND expires_at > clock_timestamp() AND (SELECT count(*) FROM relaxed) >= 0
  RETURNING name
), woken AS (
  SELECT pg_notify($4::text, '') FROM released WHERE $3::float8 <= 0
)
SELECT (SELECT count(*) FROM released)::int AS released, (SELECT count(*) FROM woken)::int AS woken`;

    // One statement for the whole batch. Only `expires_at` changes: no key column, so it neither waits for
    // a transaction holding the row FOR KEY SHARE nor leaves the page (HOT). Never inserts: a missing or
    // foreign row is simply not renewed.
    this.renewSql = `UPDATE ${t} AS l SET expires_at = clock_timestamp() + r.lease_ms * interval '1 millisecond'
FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS r(name, token, lease_ms, i)
WHERE l.name = r.name AND l.token = r.token AND l.expires_at > clock_timestamp()
RETURNING r.i`;

    // A plain row is one hold; a shaped row (token '', see postgres-shared.functions.ts) one line per live
    // hold in its `shared` column, each with its shape.
    const nowMs = `extract(epoch FROM clock_timestamp()) * 1000`;
    const holds = (where: string): string => `SELECT name, fence, holder, ttl_ms, shape FROM (
  SELECT h.name, h.fence, h.holder, ${ttl('h')} AS ttl_ms, NULL::text AS shape FROM ${t} h
  WHERE ${where} AND ${held('h')} AND h.token <> ''
  UNION ALL
  SELECT h.name, (x.value->>'f')::bigint, x.value->>'o', ceil((x.value->>'e')::float8 - ${nowMs})::bigint, h.shared->>'m'
  FROM ${t} h CROSS JOIN LATERAL jsonb_each(h.shared->'h') x
  WHERE ${where} AND h.token = '' AND (x.value->>'e')::float8 > ${nowMs}
) held ORDER BY name, fence`;
    this.inspectSql = `${holds('h.name = $1::text')} LIMIT 1`;
    this.listSql = holds(`h.name LIKE $1::text ESCAPE '!'`);

    // Locks the held row first (so the answer describes the row it changed), then releases it unless the
    // operator named another grant.
    this.forceReleaseSql = `WITH current AS (
  SELECT name, fence, holder, ${ttl('h')} AS ttl_ms FROM ${t} h WHERE h.name = $1::text AND ${held('h')} AND h.token <> '' FOR UPDATE
), taken AS (
  UPDATE ${t} l SET token = NULL, expires_at = clock_timestamp()
  FROM current c WHERE l.name = c.name AND ($2::bigint IS NULL OR c.fence = $2::bigint)
  RETURNING l.name
), woken AS (
  SELECT pg_notify($3::text, '') FROM taken
)
SELECT c.fence, c.holder, c.ttl_ms, (SELECT count(*) FROM taken) > 0 AS taken, (SELECT count(*) FROM woken) AS woken
FROM current c`;

    // Rows ended more than the retention ago. SKIP LOCKED: a row someone is taking over, or a transaction
    // has checked FOR KEY SHARE, is left for the next sweep instead of waited for. A row of a read/write
    // lock with no hold left can still carry the turn of a writer that was turned away (`shared`'s `w`,
    // see postgres-shared.functions.ts); it stays while that mark is live, or new readers would get in first.
    this.sweepSql = `DELETE FROM ${t} WHERE name IN (
  SELECT name FROM ${t} h WHERE h.expires_at < clock_timestamp() - ${ms('$1')}
    AND NOT (h.shared IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_each(h.shared->'w') w WHERE w.value::text::float8 > ${nowMs}))
  LIMIT $2::int FOR UPDATE SKIP LOCKED
)`;

    // See assertLeaseHeld: FOR KEY SHARE pins the grant until the caller's transaction ends. A shaped
    // hold is found in its row's `shared` column; pinning the row keeps every other grant of the key out.
    this.leaseCheckSql = `SELECT fence FROM ${t} h WHERE h.name = $1::text AND ${held('h')} AND (
  (h.token <> '' AND h.fence = $2::bigint)
  OR (h.token = '' AND EXISTS (SELECT 1 FROM jsonb_each(h.shared->'h') x
    WHERE (x.value->>'f')::bigint = $2::bigint AND (x.value->>'e')::float8 > ${nowMs}))
) FOR KEY SHARE`;
  }

  async acquire(db: PostgresPool, name: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const { rows } = await db.query(this.acquireSql, [name, token, leaseMs, holder]);
    const row = rows[0] as { fence: string | null; ttl_ms: string | null } | undefined;
    if (row?.fence != null) return { acquired: true, fencingToken: toSafeInteger(row.fence) };
    const ttlMs = row?.ttl_ms == null ? -1 : Number(row.ttl_ms);
    return { acquired: false, ttlMs: ttlMs > 0 ? ttlMs : -1 };
  }

  async release(db: PostgresPool, name: string, token: string, keepMs: number): Promise<boolean> {
    const { rows } = await db.query(this.releaseSql, [name, token, keepMs, this.table.channel(name)]);
    return (rows[0] as { released: number }).released > 0;
  }

  /** Indices (0-based, into `requests`) of the renewed requests. */
  async renew(db: PostgresPool, requests: readonly RenewRow[]): Promise<Set<number>> {
    const { rows } = await db.query(this.renewSql, [
      requests.map((r) => r.name),
      requests.map((r) => r.token),
      requests.map((r) => r.leaseMs),
    ]);
    return new Set(rows.map((row: { i: string }) => Number(row.i) - 1));
  }

  async inspect(db: PostgresPool, name: string): Promise<Omit<HeldLock, 'key'> | null> {
    const { rows } = await db.query(this.inspectSql, [name]);
    const row = rows[0] as HeldRow | undefined;
    return row ? heldLock(row) : null;
  }

  /** Held rows whose name matches a LIKE pattern (see `likePattern`). */
  async list(db: PostgresPool, pattern: string): Promise<Array<Omit<HeldLock, 'key'> & { name: string }>> {
    const { rows } = await db.query(this.listSql, [pattern]);
    return rows.map((row: HeldRow) => ({ name: row.name, ...heldLock(row) }));
  }

  async forceRelease(db: PostgresPool, name: string, fencingToken: number | undefined): Promise<ForceReleaseRow | null> {
    const { rows } = await db.query(this.forceReleaseSql, [name, fencingToken ?? null, this.table.channel(name)]);
    const row = rows[0] as { fence: string; holder: string; ttl_ms: string; taken: boolean } | undefined;
    return row ? { taken: row.taken, fencingToken: toSafeInteger(row.fence), holder: row.holder, ttlMs: Number(row.ttl_ms) } : null;
  }

  /** Deletes up to `limit` rows that ended more than `retainMs` ago; returns how many. */
  async sweep(db: PostgresPool, retainMs: number, limit: number): Promise<number> {
    const { rowCount } = await db.query(this.sweepSql, [retainMs, limit]);
    return rowCount ?? 0;
  }

  async ping(db: PostgresPool): Promise<void> {
    await db.query('SELECT 1');
  }

  leaseCheck(name: string, fencingToken: number): SqlStatement {
    return { text: this.leaseCheckSql, values: [name, fencingToken] };
  }
}

/** The key prefix literally, then the operator's glob (`*`, `?`) as LIKE wildcards. */
export function likePattern(prefix: string, match: string): string {
  // '!' rather than backslash: it means the same whatever standard_conforming_strings says.
  const literal = (text: string): string => text.replace(/[!%_]/g, '!$&');
  let pattern = literal(prefix);
  for (const char of match) pattern += char === '*' ? '%' : char === '?' ? '_' : literal(char);
  return pattern;
}

interface HeldRow {
  readonly name: string;
  readonly fence: string;
  readonly holder: string;
  readonly ttl_ms: string;
  readonly shape: HeldLock['shape'] | null;
}

function heldLock(row: HeldRow): Omit<HeldLock, 'key'> {
  const lock = { fencingToken: toSafeInteger(row.fence), holder: row.holder, ttlMs: Number(row.ttl_ms) };
  return row.shape ? { ...lock, shape: row.shape } : lock;
}

/** bigint columns arrive as strings; fencing tokens stay below 2^53 (µs clock until the year 2255). */
export function toSafeInteger(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new Error(`fencing token ${value} is beyond the safe integer range`);
  return number;
}
