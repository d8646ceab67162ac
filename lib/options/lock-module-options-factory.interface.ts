import type { LockModuleOptions } from './lock-module-options.interface.js';

/**
 * What `DistributedLockModule.forRootAsync({ useClass })` and `({ useExisting })` take: a provider class
 * whose `createLockOptions()` returns the module's options (or a promise of them).
 *
 * ```ts
 * @Injectable()
 * class LockConfig implements LockModuleOptionsFactory {
 *   constructor(private readonly config: ConfigService) {}
 *   createLockOptions(): LockModuleOptions {
 *     return { redis: this.config.getOrThrow('REDIS_URL') };
 *   }
 * }
 * DistributedLockModule.forRootAsync({ isGlobal: true, imports: [ConfigModule], useClass: LockConfig });
 * ```
 */
export interface LockModuleOptionsFactory {
  createLockOptions(): LockModuleOptions | Promise<LockModuleOptions>;
}
