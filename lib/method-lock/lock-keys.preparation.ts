import { LockConfigError } from '../errors/lock-config.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { compileKeyTemplate } from '../keys/key-template.js';
import { lockOrder } from '../keys/lock-order.js';
import { parameterNames } from '../keys/method-parameter-names.js';
import type { LockKeysFunction } from './distributed-lock-options.interface.js';
import type { LockedMethod, PreparedLock } from './locked-method.js';

/**
 * The `keys` of a locked method, checked at startup: `key` next to it, an empty or non-array value, and a
 * template that `key` would refuse (a placeholder naming no parameter among them) are `LockConfigError`s
 * naming the class, method and which template. Each call renders every template; the order they are taken
 * in is decided later, in `withLocks`, the same for every caller.
 */
export function prepareLockKeys(method: LockedMethod, where: string): PreparedLock['resolveKey'] {
  const { keys, key } = method.options as { keys: unknown; key?: unknown };
  if (key !== undefined) {
    throw new LockConfigError(`keys of ${where}`, keys, 'either `key` (one key) or `keys` (several at once), not both');
  }
  if (typeof keys === 'function') return keysFunction(keys as LockKeysFunction, method.label);
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new LockConfigError(
      `keys of ${where}`,
      keys,
      'a non-empty array of key templates such as ["account:{from}", "account:{to}"], or a function of the arguments returning the keys',
    );
  }
  const names = parameterNames(method.source);
  const templates = keys.map((template: unknown, index) =>
    compileKeyTemplate(template, { label: `${method.label} (keys[${index}])`, parameterNames: names }),
  );
  return (_thisArg, args) => templates.map((template) => template.render(args));
}

function keysFunction(build: LockKeysFunction, label: string): PreparedLock['resolveKey'] {
  return (thisArg, args) => {
    const keys: unknown = build.apply(thisArg, args);
    try {
      lockOrder(keys);
    } catch (error) {
      throw new LockKeyError(`The keys function of ${label} returned invalid keys: ${(error as Error).message}`);
    }
    return keys as readonly string[];
  };
}
