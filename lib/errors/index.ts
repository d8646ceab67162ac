export { LockError } from './lock.error.js';
export { LockNotAcquiredError } from './lock-not-acquired.error.js';
export { LeaseLostError, type LeaseLostReason } from './lease-lost.error.js';
export { LockStoreUnavailableError } from './lock-store-unavailable.error.js';
export { LockConfigError } from './lock-config.error.js';
export { LockKeyError } from './lock-key.error.js';
export { LeaseReleasedError } from './lease-released.error.js';
export { LockReentryError } from './lock-reentry.error.js';
export { LockNotBoundError } from './lock-not-bound.error.js';
