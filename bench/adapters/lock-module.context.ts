import type { INestApplicationContext, Provider } from '@nestjs/common';
import { DistributedLockModule, LockEvents, LockService, type LockModuleOptions } from '../../lib/index.js';
import type { AdapterOptions, Contender, LockAdapter } from './lock-adapter.js';
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
  moduleOptions: Partial<LockModuleOptions> = {},
): Promise<{ app: INestApplicationContext; locks: LockService }> {
  const app = await openNestContext(
    [
      DistributedLockModule.forRoot({
        redis: options.redisUrl,
        keyPrefix: options.keyPrefix,
        leaseMs: options.leaseMs,
        waitMs: options.waitMs,
        ...moduleOptions,
      }),
    ],
    providers,
  );
  app.get(LockEvents).on('lost', ({ key }) => options.onLost(key));
  return { app, locks: app.get(LockService) };
}

/** The library's retry behaviour, in words, for every adapter that goes through it. */
export const LOCK_MODULE_WAITING = 'woken by release (pub/sub); fallback retry 10–1000 ms, jittered (module defaults)';

/** With `fair: true`. */
export const FAIR_QUEUE_WAITING = 'queued in Redis (fair: true): the release hands the key to the next waiter and wakes only it';

/** How one of this library's paths takes a lock, once its application runs. */
export interface LibraryPath {
  /** Extra classes the path needs in the application (a decorated provider). */
  readonly providers?: Provider[];
  calls(app: INestApplicationContext, locks: LockService): Pick<LockAdapter, 'acquire' | 'run'>;
}

/**
 * One of this library's own paths: the same module configuration, waiting and loss counting, differing only
 * in how a lock is taken.
 */
export function libraryContender(
  id: string,
  label: string,
  path: (options: AdapterOptions) => LibraryPath,
  moduleOptions: Partial<LockModuleOptions> = {},
): Contender {
  return {
    id,
    label,
    role: 'library',
    packageName: 'nestjs-distributed-lock',
    tunings: { defaults: moduleOptions.fair ? FAIR_QUEUE_WAITING : LOCK_MODULE_WAITING },
    renewsLeases: true,
    async open(options): Promise<LockAdapter> {
      const { providers, calls } = path(options);
      const { app, locks } = await openLockModuleContext(options, providers, moduleOptions);
      return { ...calls(app, locks), close: () => app.close() };
    },
  };
}
