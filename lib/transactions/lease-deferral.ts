import { LeaseLostError } from '../errors/lease-lost.error.js';
import type { LockEvents } from '../events/lock-events.js';
import type { TransactionHold } from '../lease/lease-host.interface.js';
import type { Lease } from '../lease/lease.js';
import type { TransactionOwnedLeases } from './transaction-owned-leases.js';
import type { TransactionSynchronizer } from './transaction-synchronizer.interface.js';

const ignore = (): void => undefined;

/** A lost lease is the scope's outcome; any other release failure was reported as 'release-failed'. */
const rethrowLoss = (error: unknown): void => {
  if (error instanceof LeaseLostError) throw error;
};

/**
 * Release after commit, for one LockService: a transaction that ran work under a lease holds that lease
 * until it has committed or rolled back. Writes made under the lease become visible at COMMIT, and only
 * then may the next holder read them.
 *
 * The transaction counts as one more scope running under the lease, so whichever scope releases the
 * lease — the one that took it, once it and every joined scope have ended — waits for the transaction as
 * it waits for them. Right before COMMIT the lease is checked (a lost one makes the transaction roll back
 * with `LeaseLostError`), and the transaction keeps the lease (`TransactionOwnedLeases`), so it owns the
 * key meanwhile: later locked calls on the key inside it join the lease instead of waiting for it.
 */
export class LeaseDeferral implements TransactionHold {
  constructor(
    private readonly transactions: TransactionSynchronizer,
    private readonly owned: TransactionOwnedLeases,
    private readonly events: LockEvents,
  ) {}

  /**
   * A scope ran work under `lease`: true when a transaction active here now holds it too (the `deferred`
   * event). False when no transaction is active in the current context, or when the lease is already
   * lost. A synchronizer that throws leaves nothing counted behind and the error propagates: the caller
   * decides whether the key goes back at once.
   */
  hold(lease: Lease): boolean {
    const { transactions } = this;
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
      this.owned.retain(lease);
    } catch (error) {
      done();
      throw error;
    }
    this.events.emit('deferred', () => ({ ...lease.describe(), heldMs: lease.heldMs() }));
    return true;
  }

  /**
   * The scope that took `lease` has ended. Inside a transaction the transaction now holds the lease and
   * the release waits for its COMMIT or ROLLBACK; otherwise the lease is released now. Rejects with
   * `LeaseLostError` for a lost lease and with a broken integration's error (the key then goes back at
   * once); a store failure on release is an event only (`release-failed`): the key expires on its own.
   */
  endScope(lease: Lease): Promise<void> {
    // Outside transactions (the common case): released now, without the general path's async step.
    if (!this.transactionMayBeActive()) return lease.release().catch(rethrowLoss);
    return this.endScopeOfTransaction(lease);
  }

  /** False only when the synchronizer answers that no transaction is active (one that throws: the general path). */
  private transactionMayBeActive(): boolean {
    try {
      return this.transactions.isTransactionActive();
    } catch {
      return true;
    }
  }

  private async endScopeOfTransaction(lease: Lease): Promise<void> {
    let heldByTransaction: boolean;
    try {
      heldByTransaction = this.hold(lease);
    } catch (integrationError) {
      await lease.release().catch(ignore);
      throw integrationError;
    }
    if (heldByTransaction) {
      void lease.release().catch(ignore);
      return;
    }
    try {
      await lease.release();
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
    }
  }
}
