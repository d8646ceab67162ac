import type { ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, LockService, type LockModuleOptions } from '../../lib/index';

/** What else the application holds besides the lock module: the providers whose locked methods are checked. */
export type StartedAlongside = Pick<ModuleMetadata, 'providers' | 'controllers' | 'imports'>;

/**
 * The error a lock module with `options` (and `alongside` it, the providers whose locked methods are
 * checked) fails to start with, or undefined when it starts (then it is closed again).
 */
export function moduleStartError(options: LockModuleOptions, alongside: StartedAlongside = {}): Promise<unknown> {
  return appStartError({ ...alongside, imports: [DistributedLockModule.forRoot(options), ...(alongside.imports ?? [])] });
}

/**
 * The error an application of `metadata` fails to start with, or undefined when it starts (then it is
 * closed again): for a lock module configured with `forRootAsync`. Nest builds the store while it compiles
 * the module, so a refusal can come from there; a refusal from `init()` (a locked method's startup check)
 * comes after the store opened its connection, which Nest's close() would not close after a failed init:
 * the lock service is shut down directly, so the test file can end.
 */
export async function appStartError(metadata: ModuleMetadata): Promise<unknown> {
  let moduleRef;
  try {
    moduleRef = await Test.createTestingModule(metadata).compile();
  } catch (error) {
    return error;
  }
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
  } catch (error) {
    await Promise.resolve()
      .then(() => app.get(LockService).onApplicationShutdown())
      .catch(() => undefined);
    return error;
  }
  await app.close();
  return undefined;
}
