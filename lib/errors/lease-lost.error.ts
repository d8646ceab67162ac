import { LockError } from './lock.error.js';

/**
 * Why a lease stopped being ours: the store said the token no longer matches (`rejected`), no renewal got
 * through before the lease's local deadline (`expired`), or the application shut down while the lease was
 * still held past its grace period (`shutdown`).
 */
export type LeaseLostReason = 'rejected' | 'expired' | 'shutdown';

const EXPLANATIONS: Record<LeaseLostReason, string> = {
  rejected: 'the lock store no longer holds our token (expired or taken over).',
  expired: 'it could not be renewed before its deadline (store slow or unreachable, or the process was paused).',
  shutdown: 'the application shut down while it was still held.',
};

/** The lease ended while the protected code was running: another owner may already hold the key. */
export class LeaseLostError extends LockError {
  readonly code = 'LEASE_LOST';

  constructor(
    readonly key: string,
    readonly reason: LeaseLostReason,
    options?: { cause?: unknown },
  ) {
    super(`Lease on "${key}" was lost: ${EXPLANATIONS[reason]}`, options);
  }
}
