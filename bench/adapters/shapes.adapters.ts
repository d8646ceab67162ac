import { libraryContender } from './lock-module.context.js';
import { scopedCalls } from './scope-handle.js';

/**
 * This library's lock shapes (docs/lock-shapes.md) behind `LockAdapter`, for scenario 9. The multi-key
 * contenders take the two keys `pairOf(key)` for the one key a scenario names, so every workload of the
 * bench runs them unchanged.
 */

/** The two keys of a multi-key pair, already in the library's global (byte) order. */
export function pairOf(key: string): [string, string] {
  return [`${key}:a`, `${key}:b`];
}

/** `withLocks([a, b], fn)`: one scope over both keys, all or nothing. */
export const withLocksContender = libraryContender('with-locks', 'this library: LockService.withLocks([a, b])', () => ({
  calls: (_app, locks) => scopedCalls((key, body) => locks.withLocks(pairOf(key), body)),
}));

/** `acquire([a, b])` and `LeaseSet.release()`: the programmatic form of the same. */
export const lockSetContender = libraryContender('lock-set', 'this library: LockService.acquire([a, b]) / LeaseSet.release', () => ({
  calls: (_app, locks) => ({ acquire: (key) => locks.acquire(pairOf(key)) }),
}));

/**
 * What users wrote before multi-key locks: one `withLock` inside the other, on the same keys in sorted order
 * (which is what keeps two such callers from deadlocking).
 */
export const nestedWithLockContender = libraryContender('nested-with-lock', 'this library: withLock(a, () => withLock(b, fn))', () => ({
  calls: (_app, locks) =>
    scopedCalls((key, body) => {
      const [first, second] = pairOf(key);
      return locks.withLock(first, () => locks.withLock(second, body));
    }),
}));

/**
 * A semaphore: `acquire(key, { permits })`, a lease per permit. With `fair`, its waiters queue in Redis and a
 * release hands the permit to the next one (`fair: true`).
 */
export function permitsContender(permits: number, { fair = false } = {}) {
  return libraryContender(
    fair ? 'lock-service-permits-fair' : 'lock-service-permits',
    `this library: LockService.acquire(key, { permits: ${permits} })${fair ? ', fair: true' : ''}`,
    () => ({ calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key, { permits }) }) }),
    { fair },
  );
}

/** A reader of a read/write lock: `acquire(key, { mode: 'read' })`. */
export const readLockContender = libraryContender('lock-service-read', "this library: LockService.acquire(key, { mode: 'read' })", () => ({
  calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key, { mode: 'read' }) }),
}));
