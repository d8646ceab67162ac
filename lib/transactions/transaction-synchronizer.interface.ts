/** How a transaction ended. */
export type TransactionOutcome = 'committed' | 'rolled-back';

/**
 * The extension point between leases and database transactions. A lock taken inside a transaction is
 * released through it: after the transaction commits or rolls back, never before, so the next holder
 * cannot read data the previous holder has not committed yet.
 *
 * Every method may throw: a lease whose deferral fails is released at once and the locked call fails with
 * that error (so the transaction around it rolls back), never kept.
 */
export interface TransactionSynchronizer {
  /** Whether the current async context runs inside a transaction that has not completed yet. */
  isTransactionActive(): boolean;
  /**
   * Runs `check` right before that transaction commits; a throw makes it roll back instead. Used to refuse
   * committing work done under a lease that was lost meanwhile.
   */
  beforeCommit(check: () => void): void;
  /**
   * Runs `callback` once that transaction has completed, committed or rolled back — when transactions nest,
   * once every one of them that work done here may have written through has completed.
   */
  afterCompletion(callback: (outcome: TransactionOutcome) => Promise<void> | void): void;
  /**
   * Optional: keeps `value` under `name` for as long as the transactions `afterCompletion` waits for are
   * active, readable through `retained` from inside any of them. The lock layer keeps its deferred leases
   * here, so that a transaction holding one owns that key: later locked calls on the key inside the same
   * transaction run under that lease. A synchronizer without it makes those calls wait for the lease,
   * which only comes free after the COMMIT they are part of: they fail after `waitMs`.
   */
  retain?(name: string, value: object): void;
  /** Optional: what `retain` kept under `name` in the transactions of the current context, if any. */
  retained?(name: string): object | undefined;
}
