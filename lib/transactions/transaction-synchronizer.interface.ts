/** How a transaction ended. */
export type TransactionOutcome = 'committed' | 'rolled-back';

/**
 * The extension point between leases and database transactions. A lock taken inside a transaction is
 * released through it: after the transaction commits or rolls back, never before, so the next holder
 * cannot read data the previous holder has not committed yet.
 */
export interface TransactionSynchronizer {
  /** Whether the current async context runs inside a transaction that has not completed yet. */
  isTransactionActive(): boolean;
  /**
   * Runs `check` right before that transaction commits; a throw makes it roll back instead. Used to refuse
   * committing work done under a lease that was lost meanwhile.
   */
  beforeCommit(check: () => void): void;
  /** Runs `callback` once that transaction has completed, committed or rolled back. */
  afterCompletion(callback: (outcome: TransactionOutcome) => Promise<void> | void): void;
}
