import type { LeaseHost } from './lease-host.interface.js';
import type { Lease } from './lease.js';

/**
 * Inside a transaction, keeps the lease (renewed) until the transaction completes: writes made under it
 * become visible at commit, and only then may the next holder read them. The transaction checks the lease
 * before it commits (a lost one makes it roll back) and keeps it, so it owns the key meanwhile.
 *
 * Returns false when no transaction is active, or when the lease is already lost (the caller reports
 * that). A synchronizer that throws never keeps the key: the lease is given back at once and the error
 * propagates, failing the locked call so that the transaction around it rolls back.
 */
export function deferToTransaction(lease: Lease, host: LeaseHost): boolean {
  const { transactions } = host;
  try {
    if (!transactions.isTransactionActive()) return false;
    if (!lease.stillHeld()) return false;
    transactions.beforeCommit(() => lease.assertHeld());
    transactions.afterCompletion(() => lease.release().catch(() => undefined));
    host.retainInTransaction(lease);
    return true;
  } catch (error) {
    lease.release().catch(() => undefined);
    throw error;
  }
}
