import { PostgresLockTable, type PostgresLockTableOptions } from './postgres-lock-table.js';
import { isServerError } from './postgres-client.factory.js';
import type { PostgresPool } from './postgres-connection.interface.js';
import { sharedFunctionStatements } from './postgres-shared.functions.js';

/**
 * The DDL of the lease table, for teams that own their schema and run migrations themselves (then create
 * the store with `createTable: false`). Idempotent: every statement is `IF NOT EXISTS`.
 *
 * - `token` is the holder's secret, NULL once released (the row stays as a tombstone for a while, see the
 *   store's sweep, so the next grant of the key still sees the last fencing token).
 * - `fence` comes from the sequence, issued in the granting statement.
 * - `expires_at` is computed from the database clock, never the application's.
 * - `UNIQUE (name, fence)` is redundant as a constraint (name is the key) but makes `fence` a key column:
 *   a transaction that checked its lease `FOR KEY SHARE` (see `assertLeaseHeld`) then blocks every takeover,
 *   which must change `fence`, while renewals, which change only `expires_at`, go through.
 * - fillfactor 50 leaves room on each page for renewals to be HOT updates.
 * - `shared` holds the holds of a read/write lock or semaphore (see postgres-shared.functions.ts), NULL for
 *   a plain lock; tables made before it get it by `ADD COLUMN` when it is missing (nullable, no default: a
 *   catalog change, no rewrite), with the functions beside it.
 */
export function postgresLockMigration(options: PostgresLockTableOptions = {}): string {
  return migrationStatements(new PostgresLockTable(options)).join(';\n') + ';\n';
}

export function migrationStatements(table: PostgresLockTable): string[] {
  return [
    ...(table.schema ? [`CREATE SCHEMA IF NOT EXISTS "${table.schema}"`] : []),
    `CREATE SEQUENCE IF NOT EXISTS ${table.sequence} AS bigint`,
    `CREATE TABLE IF NOT EXISTS ${table.qualified} (
  name        text        PRIMARY KEY,
  token       text,
  fence       bigint      NOT NULL,
  holder      text        NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  shared      jsonb,
  CONSTRAINT ${table.grantConstraint} UNIQUE (name, fence)
) WITH (fillfactor = 50)`,
    // ALTER TABLE queues for ACCESS EXCLUSIVE even when the column is there (and every statement on the
    // table queues behind it), so it only runs when the column is missing.
    `DO $upgrade$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${table.qualified}') AND attname = 'shared' AND NOT attisdropped) THEN
    ALTER TABLE ${table.qualified} ADD COLUMN shared jsonb;
  END IF;
END $upgrade$`,
    ...sharedFunctionStatements(table),
  ];
}

/**
 * How long the store's own run of the DDL waits for a lock on the table (adding the column to a table made
 * by an earlier version needs ACCESS EXCLUSIVE, and every statement on the table queues behind the wait).
 */
const DDL_LOCK_TIMEOUT_MS = 500;

/**
 * The store could not create the lease table or bring it up to date (no right to, or the table busy):
 * a server's refusal, so the statement changed nothing. Its message names the migration to run instead.
 */
export class LeaseTableSetupError extends Error {
  readonly code: string | undefined;
  readonly severity = 'ERROR';

  constructor(table: PostgresLockTable, refusal: unknown) {
    const { message, code } = (refusal ?? {}) as { message?: unknown; code?: unknown };
    super(
      `could not create or bring up to date the lease table ${table.id} (${String(message)}): run the SQL of postgresLockMigration() as the table's owner, then create the store with createTable: false`,
    );
    this.name = 'LeaseTableSetupError';
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/**
 * Create-on-first-use. Checks for the table and sequence with one read; only when one is missing (and
 * `create` allows it) runs the DDL in a transaction behind a transaction-scoped advisory lock, so several
 * instances starting at once never race on `CREATE ... IF NOT EXISTS` (which can fail on a concurrent
 * duplicate in the catalogs). Transaction-scoped, so it works through PgBouncer's transaction pooling.
 * A refusal of the DDL by the server (rights, the table's lock not had within `DDL_LOCK_TIMEOUT_MS`) is a
 * {@link LeaseTableSetupError}.
 */
export async function ensureLockTable(pool: PostgresPool, table: PostgresLockTable, create: boolean): Promise<void> {
  if (await tableExists(pool, table)) return;
  if (!create) {
    throw new Error(
      `the lease table ${table.id} does not exist or lacks what read/write locks and semaphores need (its shared column and functions): run the SQL of postgresLockMigration() or let the store create it (createTable: true)`,
    );
  }
  const client = await pool.connect();
  // A connection error while checked out is reported here, as the failed query; without a listener it
  // would be an uncaught 'error' event.
  const ignore = (): void => undefined;
  client.on?.('error', ignore);
  let failed: unknown;
  try {
    await client.query('BEGIN');
    // Waits as long as another instance's run takes; only the DDL's own lock waits are bounded.
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`nestjs-distributed-lock:${table.id}`]);
    await client.query(`SET LOCAL lock_timeout = ${DDL_LOCK_TIMEOUT_MS}`);
    for (const statement of migrationStatements(table)) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    failed = error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw isServerError(error) ? new LeaseTableSetupError(table, error) : error;
  } finally {
    client.off?.('error', ignore);
    // A connection that failed (not a statement) is not handed back to the pool.
    client.release(failed !== undefined && !isServerError(failed));
  }
}

async function tableExists(pool: PostgresPool, table: PostgresLockTable): Promise<boolean> {
  // The table, its sequence, the `shared` column and the functions: a table made by an earlier version
  // lacks the last two and is brought up to date by the same idempotent DDL.
  const { rows } = await pool.query(
    `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL
  AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'shared' AND NOT attisdropped)
  AND (SELECT bool_and(to_regproc(f) IS NOT NULL) FROM unnest($3::text[]) AS f) AS ready`,
    [table.qualified, table.sequence, Object.values(table.sharedFunctions)],
  );
  return (rows[0] as { ready: boolean } | undefined)?.ready === true;
}
