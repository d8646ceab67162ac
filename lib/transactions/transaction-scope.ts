import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import { processWide } from '../support/process-wide.js';
import { assertLeasesHeld } from './held-leases.js';
import type { TransactionOutcome, TransactionSynchronizer } from './transaction-synchronizer.interface.js';

type CompletionCallback = (outcome: TransactionOutcome) => Promise<void> | void;

class TransactionScope {
  checks: Array<() => void> = [];
  callbacks: CompletionCallback[] = [];
  readonly retained = new Map<string, object>();
  completed = false;

  constructor(
    /** The nearest tracked transaction still active when this one began, if any. */
    readonly parent: TransactionScope | undefined,
    readonly resource: unknown,
  ) {}
}

/**
 * The innermost active transaction from `scope` up. A completed scope stays the async context of work it
 * left behind (a timer, a rescheduled job); skipping it keeps such work out of a finished transaction, and
 * a scope started there from chaining onto it: a job that reschedules itself never builds a chain.
 */
function activeFrom(scope: TransactionScope | undefined): TransactionScope | undefined {
  while (scope?.completed) scope = scope.parent;
  return scope;
}

/** One per process, so that both copies of a dual-loaded package see the same transactions. */
const scopes = processWide('transaction-scopes', () => new AsyncLocalStorage<TransactionScope>());
const logger = new Logger('DistributedLock');

/** Options of {@link trackTransaction}. */
export interface TrackTransactionOptions {
  /**
   * What the transaction runs on: a data source, an adapter, a connection name. A transaction started
   * inside another one on the same resource (`RequiresNew`) stands in for it: locks taken inside wait for
   * the inner one only, since nothing done there can write through the suspended outer one. Transactions
   * on different resources (a write to db1 inside a transaction on db2) are all waited for.
   * @default undefined — unknown: every tracked transaction around the lock is waited for
   */
  resource?: unknown;
}

/**
 * Runs `work` inside a real transaction started by `begin`, and marks that transaction's boundary for the
 * locks around and inside it:
 * - locks taken inside wait with their release until `begin` has committed or rolled back (and, when
 *   tracked transactions nest, until every one of them that the locked code may have written through has);
 * - right before COMMIT, every lease involved is checked — those taken inside and those of locked scopes
 *   around this transaction — and a lost one makes the transaction roll back with `LeaseLostError`.
 *
 * Savepoints must not be wrapped: locks taken inside one then wait for the enclosing transaction, which is
 * what decides whether their writes become visible.
 *
 * ```ts
 * await trackTransaction((work) => dataSource.transaction((em) => work(em)), (em) => this.pay(em, orderId));
 * ```
 */
export async function trackTransaction<A extends unknown[], T>(
  begin: (work: (...args: A) => Promise<T>) => Promise<T>,
  work: (...args: A) => Promise<T>,
  options: TrackTransactionOptions = {},
): Promise<T> {
  const scope = new TransactionScope(activeFrom(scopes.getStore()), options.resource);
  let result: T;
  try {
    result = await scopes.run(scope, () =>
      begin(async (...args: A) => {
        const value = await work(...args);
        assertLeasesHeld();
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
  scope.retained.clear();
  // Nothing a finished transaction kept (leases in checks and callbacks) stays reachable through it.
  const callbacks = scope.callbacks;
  scope.checks = [];
  scope.callbacks = [];
  const results = await Promise.allSettled(callbacks.map(async (callback) => callback(outcome)));
  for (const result of results) {
    if (result.status === 'rejected') logger.error('An after-transaction callback failed', result.reason);
  }
}

/**
 * The tracked transactions that work done in the current context may write through: of each resource the
 * innermost active one, and every active one of unknown resource.
 */
function waitedFor(): TransactionScope[] {
  const found: TransactionScope[] = [];
  for (let scope = activeFrom(scopes.getStore()); scope; scope = activeFrom(scope.parent)) {
    // Of each resource the innermost (found first); transactions of unknown resource all count.
    if (scope.resource === undefined || !found.some((other) => other.resource === scope!.resource)) found.push(scope);
  }
  return found;
}

/** The default synchronizer: knows the transactions marked by {@link trackTransaction}. */
export const trackedTransactions: TransactionSynchronizer = {
  // Allocation-free: asked on every locked call.
  isTransactionActive: () => activeFrom(scopes.getStore()) !== undefined,
  beforeCommit: (check) => {
    for (const scope of waitedFor()) scope.checks.push(check);
  },
  afterCompletion: (callback) => {
    const scopesLeft = waitedFor();
    let left = scopesLeft.length;
    let rolledBack = false;
    for (const scope of scopesLeft) {
      scope.callbacks.push((outcome) => {
        if (outcome === 'rolled-back') rolledBack = true;
        if (--left === 0) return callback(rolledBack ? 'rolled-back' : 'committed');
      });
    }
  },
  retain: (name, value) => {
    for (const scope of waitedFor()) scope.retained.set(name, value);
  },
  retained: (name) => {
    for (let scope = activeFrom(scopes.getStore()); scope; scope = activeFrom(scope.parent)) {
      const value = scope.retained.get(name);
      if (value) return value;
    }
    return undefined;
  },
};
