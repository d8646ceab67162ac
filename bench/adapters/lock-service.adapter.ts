import { libraryContender } from './lock-module.context.js';

/** This library's programmatic API: `LockService.acquire` and `Lease.release`. */
export const lockServiceContender = libraryContender('lock-service', 'this library: LockService.acquire/release', () => ({
  acquire: (_app, locks) => (key) => locks.acquire(key),
}));
