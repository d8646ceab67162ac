import { LockError } from './lock.error.js';

/**
 * Why a lease stopped being ours: the store said the token no longer matches (`rejected`), or no renewal
 * got through before the lease's local deadline (`expired`).
 */
export type LeaseLostReason = 'rejected' | 'expired';

/** The lease ended while the protected code was running: another owner may already hold the key. */
export class LeaseLostError extends LockError {
  readonly code = 'LEASE_LOST';

  constructor(
    readonly key: string,
    readonly reason: LeaseLostReason,
    options?: { cause?: unknown },
  ) {
    super(
      reason === 'rejected'
        ? `Lease on "${key}" was lost: the lock store no longer holds our token (expired or taken over).`
        : `Lease on "${key}" was lost: it could not be renewed before its deadline (store slow or unreachable).`,
      options,
    );
  }
}
