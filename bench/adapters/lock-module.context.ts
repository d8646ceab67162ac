import type { INestApplicationContext, Provider } from '@nestjs/common';
import { DistributedLockModule, LockEvents, LockService } from '../../lib/index.js';
import type { AdapterOptions } from './lock-adapter.js';
import { openNestContext } from './nest-context.js';

/**
 * This library configured the way an application would, with module defaults for everything the bench does
 * not have to set: in particular its retry delays (which are only a fallback to the pub/sub wake-up).
 * Losses are counted through the public 'lost' event, which costs nothing per lease (unlike listening on
 * every lease's signal).
 */
export async function openLockModuleContext(
  options: AdapterOptions,
  providers: Provider[] = [],
): Promise<{ app: INestApplicationContext; locks: LockService }> {
  const app = await openNestContext(
    [
      DistributedLockModule.forRoot({
        redis: options.redisUrl,
        keyPrefix: options.keyPrefix,
        leaseMs: options.leaseMs,
        waitMs: options.waitMs,
      }),
    ],
    providers,
  );
  app.get(LockEvents).on('lost', ({ key }) => options.onLost(key));
  return { app, locks: app.get(LockService) };
}

/** The library's retry behaviour, in words, for every adapter that goes through it. */
export const LOCK_MODULE_WAITING = 'woken by release (pub/sub); fallback retry 10–1000 ms, jittered (module defaults)';
