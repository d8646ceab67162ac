import { LockError } from './lock.error.js';

/**
 * A `@DistributedLock` method was called on an instance that no running application has bound to its
 * `LockService`: before `app.init()`, after `app.close()`, on an object Nest did not create, or in an
 * application that does not import `DistributedLockModule`. The method did not run.
 */
export class LockNotBoundError extends LockError {
  readonly code = 'LOCK_NOT_BOUND';

  constructor(
    /** `ClassName.method` */
    readonly method: string,
    reason: string,
  ) {
    super(`${method} is locked with @DistributedLock but did not run: ${reason}`);
  }
}
