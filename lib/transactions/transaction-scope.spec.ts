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
