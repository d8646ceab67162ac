import { LockKeyError } from '../errors/lock-key.error.js';

/**
 * Longest accepted lock key, in UTF-8 bytes, before the module's `keyPrefix` is added. Redis itself
 * allows far more; the limit keeps pub/sub channels, log lines and the store's memory predictable.
 */
export const MAX_LOCK_KEY_BYTES = 512;

/**
 * Keys starting with this character are the library's own bookkeeping (fencing counters), so a user key
 * can never alias one of them.
 */
export const RESERVED_KEY_PREFIX = '#';

/** Control characters would let a key value forge log lines or break the runbook's listing. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** Checks a lock key before any I/O, so a bad key never reaches the store. */
export function assertLockKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') {
    throw new LockKeyError(`Lock key must be a string, got ${key === null ? 'null' : typeof key}.`);
  }
  if (key.length === 0) throw new LockKeyError('Lock key must not be empty.');
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4): a key that short
  // is within the limit without counting (every acquisition checks its key).
  if (key.length * 3 > MAX_LOCK_KEY_BYTES) {
    const bytes = Buffer.byteLength(key, 'utf8');
    if (bytes > MAX_LOCK_KEY_BYTES) {
      throw new LockKeyError(`Lock key is ${bytes} bytes long; the limit is ${MAX_LOCK_KEY_BYTES} bytes.`);
    }
  }
  if (CONTROL_CHARACTERS.test(key)) {
    throw new LockKeyError(`Lock key ${JSON.stringify(key)} contains control characters.`);
  }
  if (key.startsWith(RESERVED_KEY_PREFIX)) {
    throw new LockKeyError(
      `Lock key ${JSON.stringify(key)} starts with "${RESERVED_KEY_PREFIX}", which is reserved for the library's own keys.`,
    );
  }
}
