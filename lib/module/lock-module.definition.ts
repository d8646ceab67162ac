import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LockModuleOptions } from '../options/lock-module-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableLockModule,
  MODULE_OPTIONS_TOKEN: LOCK_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<LockModuleOptions>({ moduleName: 'DistributedLock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLockOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
