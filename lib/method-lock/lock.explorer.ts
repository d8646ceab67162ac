import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { LockService } from '../service/lock.service.js';
import { bindClass, bindInstance, unbindClass, unbindInstance } from './lock-binding.registry.js';
import { LockMetadataAccessor } from './lock-metadata.accessor.js';
import { prepareLockedMethod } from './locked-method.preparation.js';

/**
 * Startup discovery: finds every provider and controller with `@DistributedLock` methods, checks each method
 * (options, async-ness, key template — errors stop the application from starting), and binds the instances
 * to this application's `LockService`. At shutdown the bindings are removed, so a late call fails instead of
 * locking through a closed store.
 *
 * Bindings are made in `onModuleInit`. Global modules and modules imported deeper are initialised first, so a
 * locked method called from another provider's `onModuleInit` works when this module is global or imported
 * by that provider's module; from `onApplicationBootstrap` on, it always works.
 */
@Injectable()
export class LockExplorer implements OnModuleInit, OnModuleDestroy {
  private readonly boundInstances = new Set<object>();
  private readonly boundClasses = new Set<object>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly accessor: LockMetadataAccessor,
    private readonly locks: LockService,
  ) {}

  onModuleInit(): void {
    const found: Array<{ instance: object; isStatic: boolean }> = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const methods = this.accessor.lockedMethods(Object.getPrototypeOf(instance));
      if (methods.length === 0) continue;
      // Check everything before binding anything: a failed startup leaves no binding behind.
      for (const method of methods) {
        const { shape } = prepareLockedMethod(method);
        // The earliest moment the method meets its store: a shape the store lacks stops the start here.
        if (shape) this.locks.assertShapeOffered(shape, `@DistributedLock on ${method.label}`);
      }
      found.push({ instance, isStatic: wrapper.isDependencyTreeStatic() && !wrapper.isTransient });
    }
    for (const { instance, isStatic } of found) {
      const type = (Object.getPrototypeOf(instance) as { constructor: { name: string } }).constructor;
      if (isStatic) {
        bindInstance(instance, this.locks, type.name);
        this.boundInstances.add(instance);
      } else {
        // Request-scoped and transient instances are created after startup: bind their class.
        bindClass(type, this.locks);
        this.boundClasses.add(type);
      }
    }
  }

  onModuleDestroy(): void {
    for (const instance of this.boundInstances) unbindInstance(instance, this.locks);
    for (const type of this.boundClasses) unbindClass(type, this.locks);
    this.boundInstances.clear();
    this.boundClasses.clear();
  }
}
