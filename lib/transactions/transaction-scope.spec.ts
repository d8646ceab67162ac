type TransactionScopeModule = typeof import('./transaction-scope.js');
type HeldLeasesModule = typeof import('./held-leases.js');

/** A fresh copy of a module, as a second copy of the package (its CommonJS and ESM builds) would load it. */
function freshCopy<T>(path: string): T {
  let copy!: T;
  jest.isolateModules(() => {
    copy = require(path) as T;
  });
  return copy;
}

describe('transaction tracking across two copies of the package in one process', () => {
  it('lets a lock loaded through one copy see a transaction marked through the other', async () => {
    const cjs = freshCopy<TransactionScopeModule>('./transaction-scope');
    const esm = freshCopy<TransactionScopeModule>('./transaction-scope');
    expect(cjs.trackTransaction).not.toBe(esm.trackTransaction);
    const seen: boolean[] = [];
    const completed: string[] = [];
    await cjs.trackTransaction(
      (work) => work(),
      async () => {
        seen.push(esm.trackedTransactions.isTransactionActive());
        esm.trackedTransactions.afterCompletion((outcome) => void completed.push(outcome));
      },
    );
    expect(seen).toEqual([true]);
    expect(completed).toEqual(['committed']);
    expect(esm.trackedTransactions.isTransactionActive()).toBe(false);
  });

  it('checks the leases registered through one copy before a transaction of the other commits', async () => {
    const scopes = freshCopy<TransactionScopeModule>('./transaction-scope');
    const leases = freshCopy<HeldLeasesModule>('./held-leases');
    const unregister = leases.registerHeldLeaseCheck(() => {
      throw new Error('lease lost');
    });
    try {
      await expect(scopes.trackTransaction((work) => work(), async () => 'would commit')).rejects.toThrow('lease lost');
    } finally {
      unregister();
    }
  });
});

describe('tracked transactions that leave work behind', () => {
  it('do not chain: a transactional job that reschedules itself from inside its transaction keeps one scope', async () => {
    const { trackTransaction, trackedTransactions } = require('./transaction-scope') as TransactionScopeModule;
    const { processWide } = require('../support/process-wide') as typeof import('../support/process-wide.js');
    const storage = processWide('transaction-scopes', () => undefined as never) as { getStore(): { parent?: unknown } | undefined };
    const depths: number[] = [];
    await new Promise<void>((done) => {
      let runs = 0;
      const job = (): Promise<void> =>
        trackTransaction(
          (work) => work(),
          async () => {
            let depth = 0;
            for (let scope = storage.getStore(); scope; scope = scope.parent as typeof scope) depth++;
            depths.push(depth);
            if (++runs < 200) setImmediate(() => void job());
            else done();
          },
        );
      void job();
    });
    expect(Math.max(...depths)).toBe(1);
    // Outside the transaction, work left behind by a finished one is not inside a transaction.
    expect(trackedTransactions.isTransactionActive()).toBe(false);
  });
});
