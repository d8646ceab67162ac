import * as lib from '../../lib/index.js';
import { defineLockedTarget } from './decorated-target.js';
import type { Contender, LockAdapter } from './lock-adapter.js';
import { LOCK_MODULE_WAITING, openLockModuleContext } from './lock-module.context.js';
import { acquireInScope } from './scope-handle.js';

type DistributedLockDecorator = (options: { key: string; leaseMs?: number; waitMs?: number }) => MethodDecorator;

/**
 * Looked up at run time: the decorator is being written in parallel (issue 3). Until lib/index.ts exports
 * it, this contender reports itself unavailable instead of breaking the bench.
 */
function distributedLock(): DistributedLockDecorator | undefined {
  const exported = (lib as Record<string, unknown>)['DistributedLock'];
  return typeof exported === 'function' ? (exported as DistributedLockDecorator) : undefined;
}

/** This library's decorator path: a Nest provider method under `@DistributedLock({ key: '{key}' })`. */
export const lockDecoratorContender: Contender = {
  id: 'lock-decorator',
  label: 'this library: @DistributedLock method',
  role: 'library',
  packageName: 'nestjs-distributed-lock',
  tunings: { defaults: LOCK_MODULE_WAITING },
  renewsLeases: true,
  unavailable: () => (distributedLock() ? undefined : 'lib/index.ts does not export DistributedLock yet (issue 3)'),
  async open(options): Promise<LockAdapter> {
    const DistributedLock = distributedLock()!;
    const Target = defineLockedTarget([DistributedLock({ key: '{key}', leaseMs: options.leaseMs, waitMs: options.waitMs })]);
    const { app } = await openLockModuleContext(options, [Target]);
    const target = app.get(Target);
    return {
      acquire: (key) => acquireInScope((body) => target.locked(key, body)),
      close: () => app.close(),
    };
  },
};
