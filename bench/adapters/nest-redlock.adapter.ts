import { Redlock as RedlockDecorator, RedlockModule, RedlockService } from '@anchan828/nest-redlock';
import type { EventEmitter } from 'node:events';
import { openBenchRedis } from './bench-redis-client.js';
import { defineLockedTarget } from './decorated-target.js';
import type { Contender, LockAdapter } from './lock-adapter.js';
import { openNestContext } from './nest-context.js';
import { REDLOCK_TUNINGS, redlockRetrySettings } from './redlock.settings.js';
import { scopedCalls } from './scope-handle.js';

/** @anchan828/nest-redlock: a `@Redlock(key)` method decorator over redlock v5 (beta) `using`. */
export const nestRedlockContender: Contender = {
  id: 'nest-redlock',
  label: '@anchan828/nest-redlock @Redlock method',
  role: 'alternative',
  packageName: '@anchan828/nest-redlock',
  tunings: REDLOCK_TUNINGS,
  renewsLeases: true,
  async open(options): Promise<LockAdapter> {
    const Target = defineLockedTarget([RedlockDecorator((_target: unknown, key: string) => options.keyPrefix + key, options.leaseMs)]);
    const app = await openNestContext(
      [
        RedlockModule.register({
          // The module quits its clients on shutdown, so this one is its alone.
          clients: [openBenchRedis(options.redisUrl)],
          settings: redlockRetrySettings(options.tuning, options.waitMs),
          duration: options.leaseMs,
        }),
      ],
      [Target],
    );
    // As redlock's README advises: per-attempt "resource locked" errors are emitted; without a listener they throw.
    (app.get(RedlockService) as unknown as EventEmitter).on('error', () => undefined);
    const target = app.get(Target);
    return {
      ...scopedCalls((key, body) => target.locked(key, body)),
      close: () => app.close(),
    };
  },
};
