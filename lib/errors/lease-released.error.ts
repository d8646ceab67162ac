import { LockError } from './lock.error.js';

/** `extend()` was called on a lease its owner had already released. */
export class LeaseReleasedError extends LockError {
  readonly code = 'LEASE_RELEASED';
}
