import type { LeaseHost } from '../lease/lease-host.interface.js';
import type { Lease } from '../lease/lease.js';

const ignore = (): void => undefined;

/**
 * A transaction that ran work under a lease holds that lease until it has committed or rolled back:
 * writes made under the lease become visible at COMMIT, and only then may the next holder read them.
 *
 * The transaction counts as one more scope running under the lease, so whichever scope releases the
 * lease — the one that took it, once it and every joined scope have ended — waits for the transaction as
 * it waits for them. Right before COMMIT the lease is checked (a lost one makes the transaction roll back
 * with `LeaseLostError`), and the transaction keeps the lease, so it owns the key meanwhile.
 *
 * Returns false when no transaction is active in the current context, or when the lease is already lost.
 * A synchronizer that throws leaves nothing counted behind and the error propagates: the caller decides
 * whether the key goes back at once.
 */
export function holdForTransaction(lease: Lease, host: LeaseHost): boolean {
  const { transactions } = host;
  if (!transactions.isTransactionActive()) return false;
  if (!lease.stillHeld()) return false;
  let counted = true;
  const done = (): boolean => {
    if (!counted) return false;
    counted = false;
    lease.exitScope();
    return true;
  };
  lease.enterScope();
  try {
    transactions.beforeCommit(() => lease.assertHeld());
    transactions.afterCompletion(() => {
      // When the transaction was the last thing running under the lease, its completion waits for the
      // release (already started by the scope that took the lease), so the key is free once it returns.
      if (done() && lease.idle) return lease.release().catch(ignore);
      return undefined;
    });
    host.retainInTransaction(lease);
    return true;
  } catch (error) {
    done();
    throw error;
  }
}
