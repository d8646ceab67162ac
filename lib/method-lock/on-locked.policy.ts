import type { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { OnLockedPolicy } from './distributed-lock-options.interface.js';

/** True for the values `onLocked` accepts. */
export function isOnLockedPolicy(value: unknown): value is OnLockedPolicy {
  return value === 'throw' || value === 'skip' || typeof value === 'function';
}

/**
 * What a locked call returns when its key stayed taken for the whole `waitMs` (the method did not run):
 * `'throw'` rethrows the `LockNotAcquiredError`, `'skip'` resolves `undefined`, and a fallback function is
 * called with the method's `this` and arguments, its result (or error) becoming the call's.
 */
export function applyOnLocked(policy: OnLockedPolicy, error: LockNotAcquiredError, thisArg: unknown, args: unknown[]): unknown {
  if (policy === 'skip') return undefined;
  if (typeof policy === 'function') return policy.apply(thisArg, args);
  throw error;
}
