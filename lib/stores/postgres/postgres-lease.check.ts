import { LeaseLostError } from '../../errors/lease-lost.error.js';
import type { PostgresLockStore } from './postgres-lock.store.js';

/**
 * A connection inside the caller's transaction: a `pg` client (`{ rows }`), TypeORM's `EntityManager` or
 * `QueryRunner` (rows), or anything else whose `query(text, values)` resolves to either.
 */
export interface LeaseCheckQueryable {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/**
 * The fencing check and the business write in ONE transaction, which only a lock kept in the same
 * database can give. Run it inside your transaction, before (or right after) the writes the lease
 * protects: it proves the lease row still carries this grant's fencing token and has not expired, and
 * locks it `FOR KEY SHARE` until the transaction ends. From then on no other holder can take the key over
 * (a takeover changes the fencing token, a key column, so it waits for this transaction), while the
 * holder's own renewals, which change only the expiry, still go through. So the writes commit under the
 * lease or not at all: a holder that was paused past its lease and replaced throws here and its
 * transaction rolls back, whatever its local clock believed.
 *
 * Throws `LeaseLostError` (reason `'rejected'`) when the grant no longer holds the key. Keep such
 * transactions short: while one runs, a successor's acquire waits for it (up to `commandTimeoutMs`).
 *
 * `store.leaseCheck(lease)` gives the statement itself, for other clients; docs/stores.md shows the same
 * condition inside a single `UPDATE ... WHERE EXISTS (...)`.
 */
export async function assertLeaseHeld(
  transaction: LeaseCheckQueryable,
  store: PostgresLockStore,
  lease: { readonly key: string; readonly fencingToken: number },
): Promise<void> {
  const { text, values } = store.leaseCheck(lease);
  const result = await transaction.query(text, values);
  const rows = Array.isArray(result) ? result : (result as { rows?: unknown[] } | null)?.rows;
  if (!rows || rows.length === 0) throw new LeaseLostError(lease.key, 'rejected');
}
