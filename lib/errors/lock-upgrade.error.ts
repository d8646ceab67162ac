import { LockError } from './lock.error.js';

/**
 * A call chain holding a read lock asked for the same key exclusively (`mode: 'write'`, or a plain lock).
 * Refused at once: the write could only be granted once every reader, this one included, let go, so
 * waiting would deadlock until `waitMs` (two upgraders would deadlock each other for good).
 */
export class LockUpgradeError extends LockError {
  readonly code = 'LOCK_UPGRADE_REFUSED';

  constructor(
    readonly key: string,
    /** What the inner call asked for. */
    readonly requested: 'write' | 'exclusive',
  ) {
    super(
      `Lock "${key}" is held for reading by this call chain, which asked for it ${requested === 'write' ? "with mode: 'write'" : 'exclusively'}: ` +
        'an upgrade is refused. Take the write lock from the start (a read inside a write lock may join it with reentrant: true).',
    );
  }
}
