import type { Contender, LockAdapter } from './lock-adapter.js';
import { LOCK_MODULE_WAITING, openLockModuleContext } from './lock-module.context.js';

/** This library's programmatic API: `LockService.acquire` and `Lease.release`. */
export const lockServiceContender: Contender = {
  id: 'lock-service',
  label: 'this library: LockService.acquire/release',
  role: 'library',
  packageName: 'nestjs-distributed-lock',
  tunings: { defaults: LOCK_MODULE_WAITING },
  renewsLeases: true,
  async open(options): Promise<LockAdapter> {
    const { app, locks } = await openLockModuleContext(options);
    return {
      acquire: (key) => locks.acquire(key),
      close: () => app.close(),
    };
  },
};
