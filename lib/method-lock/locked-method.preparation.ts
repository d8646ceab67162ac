import { LockConfigError } from '../errors/lock-config.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { assertLockKey } from '../keys/lock-key.js';
import { compileKeyTemplate } from '../keys/key-template.js';
import { durationOption } from '../support/duration-option.js';
import { nameOption } from '../support/name-option.js';
import { parameterNames } from '../keys/method-parameter-names.js';
import type { LockedMethod, PreparedLock } from './locked-method.js';
import type { LockKeyFunction } from './distributed-lock-options.interface.js';
import { isOnLockedPolicy } from './on-locked.policy.js';
import { prepareLockKeys } from './lock-keys.preparation.js';
import { booleanOption } from '../support/boolean-option.js';
import { lockShapeOption } from '../options/lock-shape.option.js';

const KNOWN_OPTIONS = new Set(['key', 'keys', 'waitMs', 'leaseMs', 'minHoldMs', 'reentrant', 'onLocked', 'name', 'mode', 'permits']);

/**
 * Checks a locked method once, at startup, and compiles its key: unknown or invalid options, a method that
 * cannot return a promise, and a bad template are `LockConfigError`s naming the class, method and template.
 * The result is cached on the method.
 */
export function prepareLockedMethod(method: LockedMethod): PreparedLock {
  if (method.prepared) return method.prepared;
  const { options, label } = method;
  const where = `@DistributedLock on ${label}`;
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      throw new LockConfigError(`${name} of ${where}`, (options as Record<string, unknown>)[name], 'no such option (typo?)');
    }
  }
  assertReturnsPromise(method, where);
  const duration = (name: 'waitMs' | 'leaseMs' | 'minHoldMs', min: number): number | undefined =>
    options[name] === undefined ? undefined : durationOption(`${name} of ${where}`, options[name], min);
  // Events and metrics name the lock by its template, never by the key a call renders from it.
  const name = nameOption(`name of ${where}`, options.name) ?? defaultName(method);
  const shape = lockShapeOption(options, where);
  if (shape && options.keys !== undefined) {
    const option = shape.permits === undefined ? 'mode' : 'permits';
    throw new LockConfigError(`${option} of ${where}`, shape.permits ?? shape.mode, 'a single key: read/write locks and semaphores do not take keys');
  }
  const acquire = {
    mode: shape?.mode,
    permits: shape?.permits,
    waitMs: duration('waitMs', 0),
    leaseMs: duration('leaseMs', 10),
    minHoldMs: duration('minHoldMs', 0),
    reentrant: options.reentrant,
    name,
  };
  if (acquire.reentrant !== undefined) booleanOption(`reentrant of ${where}`, acquire.reentrant, false);
  const onLocked = options.onLocked ?? 'throw';
  if (!isOnLockedPolicy(onLocked)) throw new LockConfigError(`onLocked of ${where}`, onLocked, `'throw', 'skip' or a fallback function`);

  const prepared: PreparedLock = {
    shape,
    resolveKey:
      options.keys !== undefined
        ? prepareLockKeys(method, where)
        : typeof options.key === 'function'
          ? keyFunction(options.key, label)
          : keyTemplate(method),
    acquire: Object.fromEntries(Object.entries(acquire).filter(([, value]) => value !== undefined)),
    onLocked,
  };
  method.prepared = prepared;
  return prepared;
}

/** The key template (`keys`' templates joined by `,`), or `Class.method` for a key function. */
function defaultName(method: LockedMethod): string {
  const { key, keys } = method.options;
  if (typeof key === 'string') return key;
  if (Array.isArray(keys) && keys.every((template) => typeof template === 'string')) return keys.join(',');
  return method.label;
}

function keyTemplate(method: LockedMethod): PreparedLock['resolveKey'] {
  const template = compileKeyTemplate(method.options.key, { label: method.label, parameterNames: parameterNames(method.source) });
  return (_thisArg, args) => template.render(args);
}

function keyFunction(build: LockKeyFunction, label: string): PreparedLock['resolveKey'] {
  return (thisArg, args) => {
    const key: unknown = build.apply(thisArg, args);
    try {
      assertLockKey(key);
    } catch (error) {
      throw new LockKeyError(`The key function of ${label} returned an invalid key: ${(error as Error).message}`);
    }
    return key;
  };
}

/**
 * Only promise-returning methods can be locked (the lock is held until the promise settles). Detected from
 * the method as written: an `async` function passes; a generator fails; otherwise TypeScript's
 * `design:returntype` decides (emitted with `emitDecoratorMetadata`: `Promise` passes, `Number`, `String`,
 * `Observable` and other classes fail). Left undecided — no metadata (esbuild, plain JavaScript), an
 * unannotated non-async method, `: void` or `: any` — the method is accepted here and each call checks that
 * it returned a promise; a call that gets a plain value ends in `LockConfigError`.
 */
function assertReturnsPromise(method: LockedMethod, where: string): void {
  const kind = Object.prototype.toString.call(method.source);
  if (kind === '[object AsyncFunction]') return;
  if (kind === '[object GeneratorFunction]' || kind === '[object AsyncGeneratorFunction]') {
    throw new LockConfigError(where, 'a generator method', 'an async (promise-returning) method');
  }
  const declared = method.declaredReturnType;
  if (typeof declared !== 'function' || declared === Object) return;
  if (declared === Promise || declared.prototype instanceof Promise) return;
  throw new LockConfigError(
    where,
    `a sync method declared to return ${declared.name || 'a non-promise'}`,
    'an async (promise-returning) method: the lock is held until its promise settles',
  );
}
