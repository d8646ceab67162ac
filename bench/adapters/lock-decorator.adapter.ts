import { DistributedLock } from '../../lib/index.js';
import { defineLockedTarget } from './decorated-target.js';
import { libraryContender } from './lock-module.context.js';
import { scopedCalls } from './scope-handle.js';

/**
 * This library's decorator path: a Nest provider method under `@DistributedLock({ key: '{key}' })`. The
 * decorator fixes its options when it runs, so every opened adapter decorates a class of its own.
 */
export const lockDecoratorContender = libraryContender('lock-decorator', 'this library: @DistributedLock method', (options) => {
  const decorator = DistributedLock({ key: '{key}', leaseMs: options.leaseMs, waitMs: options.waitMs }) as MethodDecorator;
  const Target = defineLockedTarget([decorator]);
  return {
    providers: [Target],
    calls: (app) => {
      const target = app.get(Target);
      return scopedCalls((key, body) => target.locked(key, body));
    },
  };
});
