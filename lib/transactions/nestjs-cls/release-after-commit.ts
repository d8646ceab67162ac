import type { TransactionalAdapter } from '@nestjs-cls/transactional';
import { trackTransaction } from '../transaction-scope.js';

/**
 * Wraps any `@nestjs-cls/transactional` adapter so that locks taken inside its transactions are released
 * after the transaction commits or rolls back:
 *
 * ```ts
 * new ClsPluginTransactional({
 *   imports: [TypeOrmModule],
 *   adapter: releaseLocksAfterCommit(new TransactionalAdapterTypeOrm({ dataSourceToken: DataSource })),
 * })
 * ```
 *
 * The library has no after-commit hook, but its adapter's `wrapWithTransaction` runs exactly at real
 * transaction boundaries (a new transaction, or `RequiresNew`); joining an active transaction does not
 * call it, so a lock inside a joined call waits for the outer commit. `wrapWithNestedTransaction`
 * (savepoints) is left alone for the same reason: only the outer transaction makes writes visible.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function releaseLocksAfterCommit<A extends TransactionalAdapter<any, any, any>>(adapter: A): A {
  const wrapped = Object.create(adapter) as A;
  wrapped.optionsFactory = (connection, extraProviders) => {
    const options = adapter.optionsFactory(connection, extraProviders);
    return {
      ...options,
      // The adapter is the resource: RequiresNew on it stands in for the outer transaction on it, while a
      // transaction of another adapter (another database) around it is waited for too.
      wrapWithTransaction: (txOptions, fn, setTx) =>
        trackTransaction((work) => options.wrapWithTransaction(txOptions, work, setTx), fn, { resource: adapter }),
    };
  };
  return wrapped;
}
