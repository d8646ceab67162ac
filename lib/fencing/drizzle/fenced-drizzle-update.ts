import { and, getTableColumns, getTableName, is, isNull, lte, max, or, SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgDatabase, PgQueryResultHKT, PgTable, PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { LockConfigError } from '../../errors/lock-config.error.js';
import type { FencedBy } from '../fenced-by.js';
import { fencedWrite } from '../fenced-write.js';

/** One fenced update through Drizzle (PostgreSQL dialect, any driver). */
export interface FencedDrizzleUpdate<Table extends PgTable> {
  readonly table: Table;
  /** The table's column holding the last fencing token written (`bigint`, any mode). */
  readonly fence: PgColumn;
  /** Columns to write; the fence column is written too, with the new token. */
  readonly set: PgUpdateSetSource<Table>;
  /** Identifies the row(s), e.g. `eq(orders.id, id)`. */
  readonly where: SQL;
  /**
   * Further compare-and-set conditions that must still hold (e.g. the value read before computing the
   * write). When they fail under a current token, nothing is written and 0 is returned.
   */
  readonly expect?: SQL;
  /** The lease the write runs under (or its `fencingToken`). */
  readonly fencedBy: FencedBy;
}

/**
 * `UPDATE … SET …, fence = $token WHERE <where> AND <expect> AND (fence IS NULL OR fence <= $token)` through
 * a Drizzle database or transaction. Resolves with the rows updated; a row already carrying the same or a
 * newer token rejects with `StaleFencingTokenError`.
 */
export async function fencedDrizzleUpdate<Table extends PgTable>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: PgDatabase<PgQueryResultHKT, any, any>,
  update: FencedDrizzleUpdate<Table>,
): Promise<number> {
  const { table, fence } = update;
  // `and()` of nothing is undefined, and no condition would update every row of the table (a filter built
  // from optional request fields makes that easy).
  if (!is(update.where, SQL)) {
    throw new LockConfigError('where', update.where, 'a condition naming the row(s) to update, e.g. eq(table.id, id) (none would update every row)');
  }
  const fenceKey = Object.entries(getTableColumns(table)).find(([, column]) => column === fence)?.[0];
  if (!fenceKey) throw new LockConfigError('fence', fence?.name, 'a column of the table being updated');
  return fencedWrite({
    resource: getTableName(table),
    fencedBy: update.fencedBy,
    helper: 'drizzle',
    apply: async (fencingToken) => {
      // Bound as a plain parameter: the column's mode (number, bigint, string) has no say in the token.
      const set = { ...update.set, [fenceKey]: sql`${fencingToken}` } as PgUpdateSetSource<Table>;
      const rows = await db
        .update(table)
        .set(set)
        .where(and(update.where, update.expect, or(isNull(fence), lte(fence, sql`${fencingToken}`))))
        .returning({ fence });
      return rows.length;
    },
    readFence: async () => {
      const [row] = await db.select({ fence: max(fence) }).from(table as PgTable).where(update.where);
      return row?.fence;
    },
  });
}
