import { Test } from '@nestjs/testing';
import { DistributedLockModule, type LockModuleOptions } from '../../lib/index';

/**
 * The error a lock module with `options` fails to start with, or undefined when it starts (then it is
 * closed again). Nest builds the store while it compiles the module, so a refusal can come from there.
 */
export async function moduleStartError(options: LockModuleOptions): Promise<unknown> {
  return Test.createTestingModule({ imports: [DistributedLockModule.forRoot(options)] })
    .compile()
    .then(async (moduleRef) => {
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      await app.close();
      return undefined;
    })
    .catch((error: unknown) => error);
}
