import { LockKeyError } from '../errors/lock-key.error.js';
import { assertLockKey } from './lock-key.js';

/**
 * The keys of a multi-key lock, checked, without duplicates, in the one global order every process takes
 * them in: the byte order of the encoded (UTF-8) key. Two calls that name overlapping sets in different
 * orders then wait for each other's keys in the same order, so neither can hold a key the other waits for
 * while waiting for one the other holds (no deadlock). The module's `keyPrefix` is the same for every key of
 * an application, so ordering the keys orders the full stored keys too. Every key is checked before any
 * I/O: a bad one never leaves the others taken.
 */
export function lockOrder(keys: unknown): string[] {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new LockKeyError(`A multi-key lock needs a non-empty array of keys, got ${Array.isArray(keys) ? 'an empty array' : typeof keys}.`);
  }
  for (const key of keys) assertLockKey(key);
  return [...new Set(keys as string[])].sort(byEncodedKey);
}

function byEncodedKey(a: string, b: string): number {
  // Not the default sort: UTF-16 code-unit order differs from byte order above U+FFFF.
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
