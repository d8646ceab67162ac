import { libraryContender } from './lock-module.context.js';

/** This library's programmatic API: `LockService.acquire` and `Lease.release`. */
export const lockServiceContender = libraryContender('lock-service', 'this library: LockService.acquire/release', () => ({
  calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key) }),
}));

/** The same with `fair: true`: waiters queue in Redis, a release hands the key to the next one. */
export const fairLockServiceContender = libraryContender(
  'lock-service-fair',
  'this library: LockService.acquire/release, fair: true',
  () => ({ calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key) }) }),
  { fair: true },
);
