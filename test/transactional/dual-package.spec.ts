import type * as LockPackage from '../../lib/index';
import { LockEvents } from '../../lib/events/lock-events';
import { resolveLockOptions } from '../../lib/options/resolve-lock-options';
import { LeaseWatchdog } from '../../lib/watchdog/lease.watchdog';

type Copy = typeof LockPackage & {
  LockEvents: typeof LockEvents;
  resolveLockOptions: typeof resolveLockOptions;
  LeaseWatchdog: typeof LeaseWatchdog;
};

/** A second copy of the package, as an application loading both its CommonJS and its ESM build has. */
function loadCopy(): Copy {
  let copy!: Copy;
  jest.isolateModules(() => {
    copy = {
      ...(require('../../lib/index') as typeof LockPackage),
      LockEvents: (require('../../lib/events/lock-events') as { LockEvents: typeof LockEvents }).LockEvents,
      resolveLockOptions: (require('../../lib/options/resolve-lock-options') as { resolveLockOptions: typeof resolveLockOptions })
        .resolveLockOptions,
      LeaseWatchdog: (require('../../lib/watchdog/lease.watchdog') as { LeaseWatchdog: typeof LeaseWatchdog }).LeaseWatchdog,
    };
  });
  return copy;
}

/** A LockService of one copy on a memory store of its own prefix, wired as the module would. */
function lockServiceOf(copy: Copy, keyPrefix: string): { locks: LockPackage.LockService; store: LockPackage.LockStore } {
  const store = new copy.MemoryLockStore({ keyPrefix });
  const locks = new copy.LockService(copy.resolveLockOptions({ store }), store, new copy.LeaseWatchdog(store), new copy.LockEvents());
  return { locks, store };
}

describe('two copies of the package in one process', () => {
  it('never let one copy’s LockService run under a lease the other copy deferred to the same transaction', async () => {
    const cjs = loadCopy();
    const esm = loadCopy();
    const a = lockServiceOf(cjs, 'dual-a:');
    const b = lockServiceOf(esm, 'dual-b:');
    let heldInB: LockPackage.HeldLock | null = null;
    await cjs.trackTransaction(
      (work) => work(),
      async () => {
        await a.locks.withLock('order:1', async () => 'reserved');
        await b.locks.withLock('order:1', async () => {
          heldInB = await b.store.inspect('order:1');
        });
      },
    );
    expect(heldInB).not.toBeNull();
    await a.locks.onApplicationShutdown();
    await b.locks.onApplicationShutdown();
  });
});
