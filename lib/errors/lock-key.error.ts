import { LockError } from './lock.error.js';

/** A lock key (or a value that would become part of one) is empty, too long, or not a string. */
export class LockKeyError extends LockError {
  readonly code = 'LOCK_KEY_INVALID';
}
