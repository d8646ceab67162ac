import { LockError } from './lock.error.js';

/** The lock stayed held by someone else for the whole `waitMs`. HTTP apps see it as 409 Conflict. */
export class LockNotAcquiredError extends LockError {
  readonly code = 'LOCK_NOT_ACQUIRED';

  constructor(
    readonly key: string,
    readonly waitedMs: number,
  ) {
    super(
      `Lock "${key}" is held by another owner; gave up after waiting ${waitedMs} ms. ` +
        'Raise waitMs if callers should queue, or handle this error as a conflict.',
    );
  }
}
