import { LockConfigError } from '../errors/lock-config.error.js';
import type { FencedBy } from './fenced-by.js';
import { fencedWrite } from './fenced-write.js';

/**
 * Anything with node-postgres' `query(text, values)`: a `pg` Client, Pool or PoolClient (and look-alikes).
 * Typed here so the core needs no `pg` import.
 */
export interface SqlQueryable {
  query(text: string, values?: unknown[]): Promise<{ rowCount: number | null; rows: unknown[] }>;
}

/** One fenced `UPDATE` (PostgreSQL). Names are SQL identifiers (quoted); values are bound as parameters. */
export interface FencedSqlUpdate {
  /** Table, optionally schema-qualified (`billing.orders`). */
  readonly table: string;
  /** Column holding the last fencing token written (`bigint`, NULL until the first fenced write). */
  readonly fenceColumn: string;
  /** Columns to write. The fence column is written too, with the new token. */
  readonly set: Readonly<Record<string, unknown>>;
  /** Identifies the row(s): column = value, joined with AND. Values may not be null. */
  readonly where: Readonly<Record<string, unknown>>;
  /**
   * Further compare-and-set conditions (column = value) that must still hold, e.g. the value read before
   * computing the write. When they fail under a current token, nothing is written and 0 is returned.
   * @default {}
   */
  readonly expect?: Readonly<Record<string, unknown>>;
  /** The lease the write runs under (or its `fencingToken`). */
  readonly fencedBy: FencedBy;
}

/**
 * Writes only if the row's fence is NULL or older than the lease's fencing token, in one statement:
 * `UPDATE t SET …, fence = $1 WHERE <where> AND <expect> AND (fence IS NULL OR fence <= $1)`.
 * Resolves with the rows updated (0 when no row matches `where`, or `expect` no longer holds). A row that
 * already carries a newer token rejects with `StaleFencingTokenError`.
 */
export async function fencedSqlUpdate(client: SqlQueryable, update: FencedSqlUpdate): Promise<number> {
  const table = qualifiedIdentifier(update.table);
  const fence = identifier(update.fenceColumn, 'fenceColumn');
  const set = columns(update.set, 'set');
  const where = columns(update.where, 'where', { values: 'non-null' });
  const expect = columns(update.expect ?? {}, 'expect', { values: 'non-null', allowEmpty: true });
  return fencedWrite({
    resource: update.table,
    fencedBy: update.fencedBy,
    helper: 'sql',
    apply: async (fencingToken) => {
      const values: unknown[] = [fencingToken];
      const bind = (value: unknown): string => `$${values.push(value)}`;
      const assignments = [...set.map(([column, value]) => `${column} = ${bind(value)}`), `${fence} = $1`];
      const conditions = [...where, ...expect].map(([column, value]) => `${column} = ${bind(value)}`);
      const result = await client.query(
        `UPDATE ${table} SET ${assignments.join(', ')} WHERE ${conditions.join(' AND ')} AND (${fence} IS NULL OR ${fence} <= $1)`,
        values,
      );
      return result.rowCount ?? 0;
    },
    readFence: async () => {
      const values = where.map(([, value]) => value);
      const conditions = where.map(([column], i) => `${column} = $${i + 1}`);
      const { rows } = await client.query(`SELECT max(${fence})::text AS fence FROM ${table} WHERE ${conditions.join(' AND ')}`, values);
      return (rows[0] as { fence?: unknown } | undefined)?.fence;
    },
  });
}

/** Checked once, before any statement: quoted column names with their values. */
function columns(
  values: Readonly<Record<string, unknown>>,
  option: string,
  rules: { values?: 'non-null'; allowEmpty?: boolean } = {},
): Array<[string, unknown]> {
  if (values === null || typeof values !== 'object') throw new LockConfigError(option, values, 'an object of column: value');
  const list = Object.entries(values);
  if (list.length === 0 && !rules.allowEmpty) throw new LockConfigError(option, values, 'at least one column');
  return list.map(([column, value]) => {
    // `column = NULL` matches nothing: say so instead of silently updating no row.
    if (rules.values === 'non-null' && (value === null || value === undefined)) {
      throw new LockConfigError(`${option}.${column}`, value, 'a non-null value');
    }
    return [identifier(column, option), value];
  });
}

/** Names come from code, but quoting keeps an odd one from changing the statement. */
function identifier(name: string, option: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\u0000')) throw new LockConfigError(option, name, 'a column name');
  return `"${name.replace(/"/g, '""')}"`;
}

function qualifiedIdentifier(name: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new LockConfigError('table', name, 'a table name');
  return name
    .split('.')
    .map((part) => identifier(part, 'table'))
    .join('.');
}
