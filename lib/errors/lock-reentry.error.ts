import { LockError } from './lock.error.js';

/**
 * A call chain that already holds a key tried to lock it again without `reentrant: true`. Raised at once:
 * waiting would only end after `waitMs`, because the holder is the waiter's own caller.
 */
export class LockReentryError extends LockError {
  readonly code = 'LOCK_REENTRY';

  constructor(
    readonly key: string,
    /** Who holds it: the call chain (a scope around this call), or the transaction this call runs in. */
    readonly heldBy: 'call-chain' | 'transaction' = 'call-chain',
  ) {
    super(
      heldBy === 'transaction'
        ? `Lock "${key}" is already held by the transaction this call runs in, until it completes. Use withLock ` +
            'or a locked method, which run under that lease, instead of acquire().'
        : `Lock "${key}" is already held by this call chain. Set reentrant: true to join the held lease, ` +
            'or restructure so the inner call does not lock the same key.',
    );
  }
}
