import type { LockService } from '../service/lock.service.js';
import { LockConfigError } from '../errors/lock-config.error.js';
import { LockNotBoundError } from '../errors/lock-not-bound.error.js';

/**
 * Which application's `LockService` a locked call goes through.
 *
 * The wrapper sits on the class prototype, which every application in the process shares, so it looks up
 * the service from `this` at call time: each application's explorer binds the instances it created at
 * startup and unbinds them at shutdown. Only identities are stored here (weakly, so bindings never keep an
 * instance alive); no service or option is ever looked up statically, and an instance no application has
 * bound fails instead of running unlocked.
 *
 * Request-scoped and transient providers get new instances after startup; for those the class is bound
 * instead, which is unambiguous as long as only one running application has that class in such a scope.
 */
const instanceBindings = new WeakMap<object, LockService>();
const classBindings = new WeakMap<object, Set<LockService>>();

/** Binds a static instance; an instance already bound to another application is a startup error. */
export function bindInstance(instance: object, locks: LockService, label: string): void {
  const bound = instanceBindings.get(instance);
  if (bound && bound !== locks) {
    throw new LockConfigError(
      'DistributedLockModule',
      `a second lock module for the same ${label} instance`,
      'one DistributedLockModule per application (import forRoot once, with isGlobal: true), and no provider ' +
        'instance shared between two applications',
    );
  }
  instanceBindings.set(instance, locks);
}

export function unbindInstance(instance: object, locks: LockService): void {
  if (instanceBindings.get(instance) === locks) instanceBindings.delete(instance);
}

/** Binds a request-scoped or transient class, whose instances are created after startup. */
export function bindClass(type: object, locks: LockService): void {
  const bound = classBindings.get(type) ?? new Set();
  bound.add(locks);
  classBindings.set(type, bound);
}

export function unbindClass(type: object, locks: LockService): void {
  classBindings.get(type)?.delete(locks);
}

/** The `LockService` a call on `thisArg` must go through; throws `LockNotBoundError` if there is none. */
export function lockServiceFor(thisArg: unknown, label: string): LockService {
  if ((typeof thisArg !== 'object' && typeof thisArg !== 'function') || thisArg === null) {
    throw new LockNotBoundError(label, `it was called without an instance (this is ${String(thisArg)}); call it as a method of the provider.`);
  }
  const bound = instanceBindings.get(thisArg);
  if (bound) return bound;
  for (let proto = Object.getPrototypeOf(thisArg); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const services = classBindings.get(proto.constructor);
    if (!services || services.size === 0) continue;
    if (services.size === 1) return services.values().next().value!;
    throw new LockNotBoundError(
      label,
      `${proto.constructor.name} is request-scoped or transient in ${services.size} running applications, so the ` +
        'instance cannot be matched to one of them.',
    );
  }
  throw new LockNotBoundError(
    label,
    'this instance is not bound to a running application. Call it after app.init() and before app.close(), on ' +
      'an instance Nest created (not `new`), in an application that imports DistributedLockModule.',
  );
}
