import { LockError } from './lock.error.js';

/**
 * A call chain that already holds a key tried to lock it again without `reentrant: true`. Raised at once:
 * waiting would only end after `waitMs`, because the holder is the waiter's own caller.
 */
export class LockReentryError extends LockError {
  readonly code = 'LOCK_REENTRY';

  constructor(readonly key: string) {
    super(
      `Lock "${key}" is already held by this call chain. Set reentrant: true to join the held lease, ` +
        'or restructure so the inner call does not lock the same key.',
    );
  }
}
