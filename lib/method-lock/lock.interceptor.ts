import { LockConfigError } from '../errors/lock-config.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { logRefusedKey } from './refused-key.log.js';
import type { LockedMethod } from './locked-method.js';
import { lockServiceFor } from './lock-binding.registry.js';
import { prepareLockedMethod } from './locked-method.preparation.js';
import { applyOnLocked } from './on-locked.policy.js';

/**
 * The lock interceptor (in the AOP sense): what every `@DistributedLock` method runs instead of its body.
 *
 * 1. Finds the `LockService` of the application that owns `this` (fails if there is none).
 * 2. Builds the key from the arguments (`LockKeyError` before any I/O).
 * 3. Runs the method inside `LockService.withLock` (`withLocks` for `keys`), which owns the rest: acquire within `waitMs`, the async
 *    context that makes `current()` work, re-entry, renewal, release (after commit, where configured),
 *    business errors passed through unchanged, and `LeaseLostError` when the lease was lost meanwhile.
 * 4. Applies `onLocked` only when this call's own acquisition failed: a `LockNotAcquiredError` thrown by a
 *    nested locked call inside the method is the method's error and passes through.
 */
export function lockedCall(method: LockedMethod, thisArg: unknown, args: unknown[]): Promise<unknown> {
  let started = false;
  try {
    const locks = lockServiceFor(thisArg, method.label);
    const prepared = method.prepared ?? prepareLockedMethod(method);
    // A method that slipped past the startup check (plain JavaScript, @ts-ignore) and returned a plain value
    // once is refused from then on, before its body runs again.
    if (method.returnedPlainValue !== undefined) throw syncMethodError(method, method.returnedPlainValue);
    let key: string | readonly string[];
    try {
      key = prepared.resolveKey(thisArg, args);
    } catch (error) {
      if (error instanceof LockKeyError) logRefusedKey(method, error);
      throw error;
    }
    const body = (): PromiseLike<unknown> => {
      started = true;
      const result: unknown = method.invoke.apply(thisArg, args);
      if (!isThenable(result)) {
        method.returnedPlainValue = result === null ? 'null' : typeof result;
        throw syncMethodError(method, method.returnedPlainValue);
      }
      return result;
    };
    const call = typeof key === 'string' ? locks.withLock(key, prepared.acquire, body) : locks.withLocks(key, prepared.acquire, body);
    // 'throw' (the default) would only rethrow: the scope's own promise is the call's, with no step of ours.
    if (prepared.onLocked === 'throw') return call;
    const { onLocked } = prepared;
    return call.then(undefined, (error: unknown) => {
      if (started || !(error instanceof LockNotAcquiredError)) throw error;
      return applyOnLocked(onLocked, error, thisArg, args);
    });
  } catch (error) {
    // Whatever fails before the scope starts rejects the call too: a locked method never throws synchronously.
    return Promise.reject(error);
  }
}

function syncMethodError(method: LockedMethod, returned: string): LockConfigError {
  return new LockConfigError(
    `@DistributedLock on ${method.label}`,
    `a method that returned ${returned}`,
    'an async (promise-returning) method; a sync method cannot be locked',
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
