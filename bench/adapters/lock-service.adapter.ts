import { libraryContender } from './lock-module.context.js';

/** This library's programmatic API: `LockService.acquire` and `Lease.release`, default options (waiters queue in Redis). */
export const lockServiceContender = libraryContender('lock-service', 'this library: LockService.acquire/release', () => ({
  calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key) }),
}));

/** The same with `fair: true`: a single attempt also respects the line (one more key read inside the script). */
export const fairLockServiceContender = libraryContender(
  'lock-service-fair',
  'this library: LockService.acquire/release, fair: true',
  () => ({ calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key) }) }),
  { fair: true },
);

/** The same with `queue: false`: every instance's first waiter is woken by a release and they race (the default before). */
export const racingLockServiceContender = libraryContender(
  'lock-service-race',
  'this library: LockService.acquire/release, queue: false',
  () => ({ calls: (_app, locks) => ({ acquire: (key) => locks.acquire(key) }) }),
  { queue: false },
);
