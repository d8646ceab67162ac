import { libraryContender } from './lock-module.context.js';
import { scopedCalls } from './scope-handle.js';

/** This library's scoped API: `LockService.withLock(key, fn)`, which also sets up the async lease context. */
export const withLockContender = libraryContender('with-lock', 'this library: LockService.withLock', () => ({
  calls: (_app, locks) => scopedCalls((key, body) => locks.withLock(key, body)),
}));
