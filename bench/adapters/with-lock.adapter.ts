import type { Contender, LockAdapter } from './lock-adapter.js';
import { LOCK_MODULE_WAITING, openLockModuleContext } from './lock-module.context.js';
import { acquireInScope } from './scope-handle.js';

/** This library's scoped API: `LockService.withLock(key, fn)`, which also sets up the async lease context. */
export const withLockContender: Contender = {
  id: 'with-lock',
  label: 'this library: LockService.withLock',
  role: 'library',
  packageName: 'nestjs-distributed-lock',
  tunings: { defaults: LOCK_MODULE_WAITING },
  renewsLeases: true,
  async open(options): Promise<LockAdapter> {
    const { app, locks } = await openLockModuleContext(options);
    return {
      acquire: (key) => acquireInScope((body) => locks.withLock(key, body)),
      close: () => app.close(),
    };
  },
};
