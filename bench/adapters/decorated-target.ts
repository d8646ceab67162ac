import 'reflect-metadata';
import { Injectable, type Type } from '@nestjs/common';

/** A provider whose `locked(key, body)` method is wrapped by a lock decorator; `body` is the critical section. */
export interface LockedTarget {
  locked(key: string, body: () => Promise<void>): Promise<void>;
}

/**
 * Defines a fresh provider class and applies `decorators` to its `locked` method exactly as the compiler
 * would for `@Decorator() async locked(key: string, body: ...)`, design metadata included. The class is
 * made per call because decorator libraries fix their options (lease, retry delay) at decoration time.
 * The parameter really is named `key`: decorators that resolve keys by argument name rely on it.
 */
export function defineLockedTarget(decorators: MethodDecorator[]): Type<LockedTarget> {
  class DecoratedLockTarget implements LockedTarget {
    async locked(key: string, body: () => Promise<void>): Promise<void> {
      void key;
      await body();
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(DecoratedLockTarget.prototype, 'locked')!;
  const decorated = Reflect.decorate(
    [
      ...decorators,
      Reflect.metadata('design:type', Function),
      Reflect.metadata('design:paramtypes', [String, Function]),
      Reflect.metadata('design:returntype', Promise),
    ],
    DecoratedLockTarget.prototype,
    'locked',
    descriptor,
  ) as PropertyDescriptor | undefined;
  Object.defineProperty(DecoratedLockTarget.prototype, 'locked', decorated ?? descriptor);
  Injectable()(DecoratedLockTarget);
  return DecoratedLockTarget;
}
