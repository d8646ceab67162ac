import type { AcquireResult, HeldLock, LockShape, LockShapeName } from '../lock-store.interface.js';
import { lockShapeName } from '../lock-shape.js';
import type { PostgresPool } from './postgres-connection.interface.js';
import type { PostgresLockTable } from './postgres-lock-table.js';
import { toSafeInteger } from './postgres-lock.queries.js';

export interface SharedDropRow {
  readonly taken: boolean;
  readonly lock: Omit<HeldLock, 'key'>;
}

/** The calls of the read/write lock and semaphore functions (see postgres-shared.functions.ts). */
export class PostgresSharedQueries {
  private readonly acquireSql: string;
  private readonly releaseSql: string;
  private readonly renewSql: string;
  private readonly dropSql: string;

  constructor(private readonly table: PostgresLockTable) {
    const f = table.sharedFunctions;
    this.acquireSql = `SELECT granted_fence, denied_ttl_ms FROM ${f.acquire}($1::text, $2::text, $3::text, $4::bigint, $5::float8, $6::float8, $7::text)`;
    this.releaseSql = `SELECT ${f.release}($1::text, $2::text, $3::float8, $4::text) AS released`;
    this.renewSql = `SELECT i FROM ${f.renew}($1::text[], $2::text[], $3::float8[]) AS i`;
    this.dropSql = `SELECT d_fence, d_holder, d_ttl_ms, d_mode, d_taken FROM ${f.drop}($1::text, $2::bigint, $3::text)`;
  }

  async acquire(db: PostgresPool, name: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const mode = lockShapeName(shape);
    const waitingMs = mode === 'write' ? Math.min(shape.waitingMs ?? leaseMs, leaseMs) : 0;
    const { rows } = await db.query(this.acquireSql, [name, token, mode, shape.permits ?? null, leaseMs, waitingMs, holder]);
    const row = rows[0] as { granted_fence: string | null; denied_ttl_ms: string | null };
    if (row.granted_fence != null) return { acquired: true, fencingToken: toSafeInteger(row.granted_fence) };
    return { acquired: false, ttlMs: row.denied_ttl_ms == null ? -1 : Number(row.denied_ttl_ms) };
  }

  async release(db: PostgresPool, name: string, token: string, keepMs: number): Promise<boolean> {
    const { rows } = await db.query(this.releaseSql, [name, token, keepMs, this.table.channel(name)]);
    return (rows[0] as { released: boolean }).released === true;
  }

  /** Indices (0-based, into the arrays) of the renewed holds. */
  async renew(db: PostgresPool, requests: ReadonlyArray<{ readonly name: string; readonly token: string; readonly leaseMs: number }>): Promise<number[]> {
    const { rows } = await db.query(this.renewSql, [
      requests.map((r) => r.name),
      requests.map((r) => r.token),
      requests.map((r) => r.leaseMs),
    ]);
    return rows.map((row: { i: string }) => Number(row.i) - 1);
  }

  /** Null when no shaped hold of the key is live. */
  async drop(db: PostgresPool, name: string, fencingToken: number | undefined): Promise<SharedDropRow | null> {
    const { rows } = await db.query(this.dropSql, [name, fencingToken ?? null, this.table.channel(name)]);
    const row = rows[0] as { d_fence: string; d_holder: string; d_ttl_ms: string; d_mode: LockShapeName; d_taken: boolean } | undefined;
    if (!row) return null;
    return {
      taken: row.d_taken,
      lock: { fencingToken: toSafeInteger(row.d_fence), holder: row.d_holder, ttlMs: Number(row.d_ttl_ms), shape: row.d_mode },
    };
  }
}
