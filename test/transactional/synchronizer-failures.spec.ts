import type { TransactionSynchronizer } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

/** A custom integration that claims a transaction is active, then breaks while the lock defers to it. */
function brokenSynchronizer(breaks: 'isTransactionActive' | 'beforeCommit' | 'afterCompletion'): TransactionSynchronizer {
  const fail = (): never => {
    throw new Error(`${breaks} is broken`);
  };
  return {
    isTransactionActive: () => (breaks === 'isTransactionActive' ? fail() : true),
    beforeCommit: () => (breaks === 'beforeCommit' ? fail() : undefined),
    afterCompletion: () => (breaks === 'afterCompletion' ? fail() : undefined),
  };
}

describe('a transaction synchronizer that throws', () => {
  const prefix = testPrefix(__filename);

  it.each(['isTransactionActive', 'beforeCommit', 'afterCompletion'] as const)(
    'never keeps the key when %s throws: the call fails with its error and no lease stays held',
    async (breaks) => {
      const keyPrefix = `${prefix}${breaks}:`;
      const app = await createLockApp({ store: 'memory', keyPrefix, transactionSynchronizer: brokenSynchronizer(breaks) });
      try {
        const body = jest.fn(async () => 'written');
        const error = await app.locks.withLock('order:1', body).catch((e: unknown) => e);
        expect((error as Error).message).toBe(`${breaks} is broken`);
        expect(await app.store.inspect('order:1')).toBeNull();
        if (breaks === 'isTransactionActive') {
          // Asked before anything is taken: the lock is never acquired and the body never runs.
          expect(body).not.toHaveBeenCalled();
          expect(app.recorded('acquired')).toEqual([]);
        } else {
          expect(app.recorded('released').map((e) => e.key)).toEqual(['order:1']);
        }
      } finally {
        await app.close();
      }
    },
  );

  it('gives the key back and fails the scope with its error when isTransactionActive throws as an `await using` block ends', async () => {
    let broken = false;
    const synchronizer: TransactionSynchronizer = {
      isTransactionActive: () => {
        if (broken) throw new Error('isTransactionActive is broken');
        return false;
      },
      beforeCommit: () => undefined,
      afterCompletion: () => undefined,
    };
    const app = await createLockApp({ store: 'memory', keyPrefix: `${prefix}dispose:`, transactionSynchronizer: synchronizer });
    try {
      const lease = await app.locks.acquire('order:2');
      broken = true;
      await expect(lease[Symbol.asyncDispose]()).rejects.toThrow('isTransactionActive is broken');
      expect(await app.store.inspect('order:2')).toBeNull();
      expect(lease.held).toBe(false);
    } finally {
      await app.close();
    }
  });
});
