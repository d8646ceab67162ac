import { processWide } from '../support/process-wide.js';

/**
 * How each running `LockService` checks the leases of the locked scopes around the current call. Kept per
 * process (see `processWide`): the copy of the package that marks a transaction must reach the leases of
 * every copy that took one.
 */
const checks = processWide('held-lease-checks', () => new Set<() => void>());

/** @internal Registered by every LockService while it runs; returns the function that unregisters it. */
export function registerHeldLeaseCheck(check: () => void): () => void {
  checks.add(check);
  return () => checks.delete(check);
}

/**
 * Throws `LeaseLostError` if a lease held by a locked scope around the current call is gone — lost, or
 * past its local deadline although no timer has said so yet (a frozen process).
 *
 * A transaction started inside a locked scope (`withLock(key, () => dataSource.transaction(...))`, or
 * `@DistributedLock` above `@Transactional`) must call this right before it commits, as the other order
 * (a lock inside the transaction) does through `beforeCommit`: then a lease lost before COMMIT stops the
 * COMMIT whichever of lock and transaction encloses the other. `trackTransaction` calls it for you.
 */
export function assertLeasesHeld(): void {
  for (const check of checks) check();
}
