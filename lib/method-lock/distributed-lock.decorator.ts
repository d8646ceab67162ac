import { LockConfigError } from '../errors/lock-config.error.js';
import { lockedCall } from './lock.interceptor.js';
import { copyMethodMetadata, wrapMethod } from './copy-method-metadata.js';
import type { DistributedLockOptions, LockKeyFunction, LockedMethodOptions, SingleKeyLockOptions } from './distributed-lock-options.interface.js';
import { LOCKED_METHOD } from '../lock.internal-constants.js';
import { LockedMethod, ownLockedMethod, recordLockedMethod } from './locked-method.js';

type AnyAsyncMethod = (...args: any[]) => Promise<unknown>;

/**
 * `{}` when a key function (or fallback) taking `A` can be called with the method's arguments: the method
 * passes at least as many arguments, and each one is assignable to what the key function takes (a key
 * function may take a wider type, e.g. `{ orderId: string }` for a method's `PayDto`). Otherwise an
 * object whose one property says what is wrong, which is what the compiler's error then names.
 */
type KeyFitsMethod<T, A extends unknown[]> = T extends (...args: infer P) => Promise<unknown>
  ? P extends [...A, ...unknown[]]
    ? unknown
    : { 'the key function or onLocked fallback takes parameters the method does not pass (more of them, or other types)': never }
  : { 'a locked method must return a Promise': never };

/**
 * A method decorator typed against the method it decorates: the method must return a Promise, and a key
 * function or fallback must accept the method's leading arguments.
 */
export type DistributedLockDecorator<A extends unknown[]> = <T extends AnyAsyncMethod>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<T> & KeyFitsMethod<T, A>,
) => TypedPropertyDescriptor<T>;

/**
 * Runs the method under a cluster-wide lock on the key built from its arguments.
 *
 * ```ts
 * @DistributedLock({ key: 'order:{orderId}', waitMs: 2_000 })
 * async pay(orderId: string, amount: number) {}
 *
 * @Cron('* * * * *')
 * @DistributedLock('job:close-expired-orders', { waitMs: 0, onLocked: 'skip', minHoldMs: 50_000 })
 * async closeExpired() {}
 * ```
 *
 * The prototype method is replaced when the class is defined, so the lock also applies to `this.pay()`
 * self-calls and to method references taken at startup (`@nestjs/schedule`, queue processors). Metadata of
 * other decorators survives in either order. Templates, options and the method's async-ness are checked
 * when the application starts; the instance must belong to an application that imports
 * `DistributedLockModule`, otherwise the call fails with `LockNotBoundError` instead of running unlocked.
 */
export function DistributedLock<A extends unknown[] = any[]>(options: DistributedLockOptions<A>): DistributedLockDecorator<A>;
export function DistributedLock<A extends unknown[] = any[]>(
  key: string | LockKeyFunction<A>,
  options?: LockedMethodOptions<A> & Pick<SingleKeyLockOptions<A>, 'mode' | 'permits'>,
): DistributedLockDecorator<A>;
export function DistributedLock(
  keyOrOptions: string | LockKeyFunction | DistributedLockOptions,
  maybeOptions?: LockedMethodOptions & Pick<SingleKeyLockOptions, 'mode' | 'permits'>,
): DistributedLockDecorator<any[]> {
  const options: DistributedLockOptions =
    typeof keyOrOptions === 'string' || typeof keyOrOptions === 'function'
      ? { ...maybeOptions, key: keyOrOptions }
      : { ...keyOrOptions };

  return (target, propertyKey, descriptor) => {
    const where = `@DistributedLock on ${describeMember(target, propertyKey)}`;
    const original: unknown = descriptor?.value;
    if (typeof original !== 'function') {
      throw new LockConfigError(where, describeMemberKind(descriptor), 'a method (not a property, getter or setter)');
    }
    if (typeof target === 'function') {
      throw new LockConfigError(where, 'a static method', 'an instance method of a provider or controller');
    }
    if (ownLockedMethod(target, propertyKey)) {
      throw new LockConfigError(where, 'a second @DistributedLock', 'one @DistributedLock per method (several keys at once: `keys`)');
    }
    // TypeScript defines the decorated property only after all decorators ran, so the prototype still holds
    // the method as written, even when a decorator below this one already wrapped `descriptor.value`.
    const written = Object.getOwnPropertyDescriptor(target, propertyKey)?.value;
    const method = new LockedMethod(
      target,
      propertyKey,
      options,
      original as (...args: unknown[]) => unknown,
      typeof written === 'function' ? written : (original as (...args: unknown[]) => unknown),
      Reflect.getMetadata('design:returntype', target, propertyKey),
    );
    const wrapper = wrapMethod(original as (...args: unknown[]) => unknown, (thisArg, args) => lockedCall(method, thisArg, args));
    copyMethodMetadata(original, wrapper);
    Reflect.defineMetadata(LOCKED_METHOD, method, wrapper);
    recordLockedMethod(method);
    descriptor.value = wrapper as typeof descriptor.value;
    return descriptor;
  };
}

function describeMember(target: object, propertyKey: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor?.name;
  return `${owner || '<anonymous class>'}.${String(propertyKey)}`;
}

function describeMemberKind(descriptor: PropertyDescriptor | undefined): string {
  if (!descriptor) return 'a property';
  if (descriptor.get || descriptor.set) return 'an accessor';
  return `a property holding ${descriptor.value === null ? 'null' : typeof descriptor.value}`;
}
