import { Module, type ConfigurableModuleAsyncOptions, type Provider } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { LockEventLogger } from '../events/lock-event.logger.js';
import { LockEvents } from '../events/lock-events.js';
import { LockExplorer } from '../method-lock/lock.explorer.js';
import { LockMetadataAccessor } from '../method-lock/lock-metadata.accessor.js';
import { LockErrorFilter } from '../http/lock-error.filter.js';
import { LockService } from '../service/lock.service.js';
import { RESOLVED_LOCK_OPTIONS } from '../lock.internal-constants.js';
import { lockTelemetryProvider } from '../observability/lock-telemetry.js';
import { LockStore } from '../stores/lock-store.interface.js';
import { LeaseWatchdog } from '../watchdog/lease.watchdog.js';
import { ConfigurableLockModule, LOCK_MODULE_OPTIONS, lockOptionsProvider } from './lock-module.definition.js';
import type { LockModuleOptions } from '../options/lock-module-options.interface.js';
import { lockStoreProvider } from './lock-store.provider.js';
import { resolveLockOptions } from '../options/resolve-lock-options.js';

/**
 * Cluster-wide locks for a Nest application: `DistributedLockModule.forRoot({ redis })`,
 * `.forRootAsync({ inject, useFactory })` or `.forRootAsync({ useClass })` (a `LockModuleOptionsFactory`),
 * with `isGlobal` to skip importing it in every feature module.
 * Options are validated while the application starts.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: RESOLVED_LOCK_OPTIONS,
      inject: [LOCK_MODULE_OPTIONS],
      useFactory: (options: LockModuleOptions) => resolveLockOptions(options),
    },
    lockStoreProvider,
    LockEvents,
    LockEventLogger,
    lockTelemetryProvider,
    LeaseWatchdog,
    LockService,
    LockMetadataAccessor,
    LockExplorer,
    { provide: APP_FILTER, useClass: LockErrorFilter },
  ],
  exports: [LockService, LockEvents, LockStore],
})
export class DistributedLockModule extends ConfigurableLockModule {
  /** @internal Called by the module builder for `forRootAsync`: see `lockOptionsProvider`. */
  static createAsyncOptionsProvider(options: ConfigurableModuleAsyncOptions<LockModuleOptions, 'createLockOptions'>): Provider {
    return lockOptionsProvider(options);
  }
}

/** The same module under its short name. */
export { DistributedLockModule as LockModule };
