import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import type { TransactionOutcome, TransactionSynchronizer } from './transaction-synchronizer.interface.js';

class TransactionScope {
  readonly checks: Array<() => void> = [];
  readonly callbacks: Array<(outcome: TransactionOutcome) => Promise<void> | void> = [];
  completed = false;
}

const scopes = new AsyncLocalStorage<TransactionScope>();
const logger = new Logger('DistributedLock');

/**
 * Runs `work` inside a real transaction started by `begin`, and marks that transaction's boundary for the
 * locks taken inside it: their releases wait until `begin` has committed or rolled back. Savepoints must
 * not be wrapped: locks taken inside one then wait for the enclosing transaction, which is what decides
 * whether their writes become visible.
 *
 * ```ts
 * await trackTransaction((work) => dataSource.transaction((em) => work(em)), (em) => this.pay(em, orderId));
 * ```
 */
export async function trackTransaction<A extends unknown[], T>(
  begin: (work: (...args: A) => Promise<T>) => Promise<T>,
  work: (...args: A) => Promise<T>,
): Promise<T> {
  const scope = new TransactionScope();
  let result: T;
  try {
    result = await scopes.run(scope, () =>
      begin(async (...args: A) => {
        const value = await work(...args);
        for (const check of scope.checks) check();
        return value;
      }),
    );
  } catch (error) {
    await complete(scope, 'rolled-back');
    throw error;
  }
  await complete(scope, 'committed');
  return result;
}

/** A completion callback's failure is logged; it never replaces the transaction's own outcome. */
async function complete(scope: TransactionScope, outcome: TransactionOutcome): Promise<void> {
  scope.completed = true;
  const results = await Promise.allSettled(scope.callbacks.map(async (callback) => callback(outcome)));
  for (const result of results) {
    if (result.status === 'rejected') logger.error('An after-transaction callback failed', result.reason);
  }
}

/** The default synchronizer: knows the transactions marked by {@link trackTransaction}. */
export const trackedTransactions: TransactionSynchronizer = {
  isTransactionActive: () => {
    const scope = scopes.getStore();
    return scope !== undefined && !scope.completed;
  },
  beforeCommit: (check) => scopes.getStore()?.checks.push(check),
  afterCompletion: (callback) => scopes.getStore()?.callbacks.push(callback),
};
