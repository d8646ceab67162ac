import type { DataSource, EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral, QueryDeepPartialEntity } from 'typeorm';
import { LockConfigError } from '../../errors/lock-config.error.js';
import type { FencedBy } from '../fenced-by.js';
import { fencedWrite } from '../fenced-write.js';

/** One fenced update through TypeORM's QueryBuilder. Properties are entity property names, not columns. */
export interface FencedTypeOrmUpdate<Entity extends ObjectLiteral> {
  readonly entity: EntityTarget<Entity>;
  /** Property holding the last fencing token written (a `bigint` column, nullable or defaulting to 0). */
  readonly fenceProperty: keyof Entity & string;
  /** Properties to write; the fence property is written too, with the new token. */
  readonly set: QueryDeepPartialEntity<Entity>;
  /** Identifies the row(s), as in `find({ where })`. */
  readonly where: FindOptionsWhere<Entity>;
  /**
   * Further compare-and-set conditions that must still hold (e.g. the value read before computing the
   * write). When they fail under a current token, nothing is written and 0 is returned.
   * @default {}
   */
  readonly expect?: FindOptionsWhere<Entity>;
  /** The lease the write runs under (or its `fencingToken`). */
  readonly fencedBy: FencedBy;
}

/**
 * `UPDATE … SET …, fence = :token WHERE <where> AND <expect> AND (fence IS NULL OR fence <= :token)` through
 * the given EntityManager (inside a transaction: the transaction's manager) or DataSource. Resolves with
 * the rows updated; a row already carrying a newer token rejects with `StaleFencingTokenError`.
 */
export async function fencedTypeOrmUpdate<Entity extends ObjectLiteral>(
  manager: EntityManager | DataSource,
  update: FencedTypeOrmUpdate<Entity>,
): Promise<number> {
  assertFilter(update.where);
  const metadata = ('connection' in manager ? manager.connection : manager).getMetadata(update.entity);
  const fenceColumn = metadata.findColumnWithPropertyPath(update.fenceProperty);
  if (!fenceColumn) {
    throw new LockConfigError('fenceProperty', update.fenceProperty, `a column property of ${metadata.name}`);
  }
  return fencedWrite({
    resource: metadata.tableName,
    fencedBy: update.fencedBy,
    helper: 'typeorm',
    apply: async (fencingToken) => {
      const qb = manager.createQueryBuilder().update(update.entity);
      const fence = qb.escape(fenceColumn.databaseName);
      const result = await qb
        .set({ ...update.set, [update.fenceProperty]: fencingToken } as QueryDeepPartialEntity<Entity>)
        .where(update.where)
        .andWhere(update.expect ?? {})
        .andWhere(`(${fence} IS NULL OR ${fence} <= :nestjsDistributedLockFence)`, { nestjsDistributedLockFence: fencingToken })
        .execute();
      return result.affected ?? 0;
    },
    readFence: async () => {
      const qb = manager.createQueryBuilder(update.entity, 'fenced');
      const row = await qb
        .select(`MAX(${qb.escape('fenced')}.${qb.escape(fenceColumn.databaseName)})`, 'fence')
        .where(update.where)
        .getRawOne<{ fence: unknown }>();
      return row?.fence;
    },
  });
}

/**
 * A `where` that names no row: `{}`, every property undefined (TypeORM leaves those out), an empty list,
 * or a list with such a member. TypeORM turns each into `WHERE 1=1`, and the update would write every row
 * of the table, which a filter built from optional request fields makes easy.
 */
function assertFilter(where: unknown): void {
  const filters = Array.isArray(where) ? where : [where];
  const names = (filter: unknown): boolean =>
    typeof filter === 'object' && filter !== null && Object.values(filter).some((value) => value !== undefined);
  if (filters.length > 0 && filters.every(names)) return;
  throw new LockConfigError('where', where, 'a filter naming the row(s) to update (an empty one would update every row)');
}
