import { ConfigurableModuleBuilder, type ConfigurableModuleAsyncOptions, type FactoryProvider } from '@nestjs/common';
import { LockConfigError } from '../errors/lock-config.error.js';
import type { LockModuleOptionsFactory } from '../options/lock-module-options-factory.interface.js';
import type { LockModuleOptions } from '../options/lock-module-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableLockModule,
  MODULE_OPTIONS_TOKEN: LOCK_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<LockModuleOptions>({ moduleName: 'DistributedLock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLockOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/**
 * The options provider of `forRootAsync`. The class forms (`useClass`, `useExisting`) are checked before
 * they are called: without this, a class whose method has another name (plain JavaScript, a typo) fails
 * inside Nest's injector with "optionsFactory[...] is not a function".
 */
export function lockOptionsProvider(options: ConfigurableModuleAsyncOptions<LockModuleOptions, 'createLockOptions'>): FactoryProvider {
  if (options.useFactory) return { provide: LOCK_MODULE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] };
  const form = options.useExisting ? 'useExisting' : 'useClass';
  const type = options.useExisting ?? options.useClass;
  return {
    provide: LOCK_MODULE_OPTIONS,
    inject: [type!],
    useFactory: (factory: Partial<LockModuleOptionsFactory> | undefined) => {
      if (typeof factory?.createLockOptions !== 'function') {
        throw new LockConfigError(
          `forRootAsync({ ${form} })`,
          typeof type === 'function' ? type.name : String(type),
          'a provider with a createLockOptions() method that returns the options (see LockModuleOptionsFactory)',
        );
      }
      return factory.createLockOptions();
    },
  };
}
