import { LockError } from './lock.error.js';

/**
 * A guarded write carried an older fencing token than the one the resource last accepted: the lease it ran
 * under had ended (its holder was paused, partitioned or too slow) and a newer holder has written since.
 * The write was not applied; roll back whatever else the same transaction did.
 */
export class StaleFencingTokenError extends LockError {
  readonly code = 'STALE_FENCING_TOKEN';

  constructor(
    /** What refused the write, e.g. the table name. Never row values. */
    readonly resource: string,
    /** The token the refused write carried. */
    readonly fencingToken: number,
    /** The token the resource holds now, when the helper could read it. */
    readonly currentFencingToken: number | undefined,
    /** The lock key of the lease the write ran under, when the caller passed the lease. */
    readonly lockKey: string | undefined,
  ) {
    const current = currentFencingToken === undefined ? 'a newer token' : `token ${currentFencingToken}`;
    const lease = lockKey === undefined ? 'The lease it ran under' : `The lease on "${lockKey}" it ran under`;
    super(
      `Write to ${resource} with fencing token ${fencingToken} refused: it already carries ${current} from a newer ` +
        `lock holder. ${lease} had ended; the write was not applied, so roll back its transaction.`,
    );
  }
}
