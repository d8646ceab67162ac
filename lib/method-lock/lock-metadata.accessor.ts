import { Injectable } from '@nestjs/common';
import { MetadataScanner } from '@nestjs/core';
import type { LockedMethod } from './locked-method.js';
import { LOCKED_METHOD, LOCKED_METHODS } from '../lock.internal-constants.js';

/** Every read of `@DistributedLock` metadata goes through here. */
@Injectable()
export class LockMetadataAccessor {
  constructor(private readonly scanner: MetadataScanner) {}

  /** The `LockedMethod` a wrapper function stands for, if it is one. */
  lockedMethodOf(fn: unknown): LockedMethod | undefined {
    return typeof fn === 'function' ? Reflect.getOwnMetadata(LOCKED_METHOD, fn) : undefined;
  }

  /**
   * All locked methods an instance with this prototype can run: those recorded on each prototype of the
   * chain (found even when a decorator above ours wrapped the method without copying metadata), plus any
   * locked wrapper reachable under another name (methods copied between classes, mixins).
   */
  lockedMethods(prototype: object | null): LockedMethod[] {
    const found = new Set<LockedMethod>();
    for (let proto = prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      const own: Map<string | symbol, LockedMethod> | undefined = Reflect.getOwnMetadata(LOCKED_METHODS, proto);
      own?.forEach((method) => found.add(method));
    }
    if (prototype) {
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = this.lockedMethodOf((prototype as Record<string, unknown>)[name]);
        if (method) found.add(method);
      }
    }
    return [...found];
  }
}
