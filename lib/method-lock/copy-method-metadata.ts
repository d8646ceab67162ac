type AnyFunction = (...args: any[]) => any;

/**
 * Wraps `original` in a Proxy whose calls go to `call` instead.
 *
 * A Proxy rather than a new function because it forwards everything it does not trap: `name`, `length`,
 * own properties other decorators set on the function (reads and writes), and `instanceof`. Only
 * reflect-metadata, which is keyed by object identity, has to be copied: see {@link copyMethodMetadata}.
 */
export function wrapMethod<F extends AnyFunction>(
  original: F,
  call: (thisArg: unknown, args: unknown[]) => unknown,
): F {
  return new Proxy(original, {
    apply: (_target, thisArg, args: unknown[]) => call(thisArg, args),
  });
}

/**
 * Copies every reflect-metadata entry defined on `from` itself onto `to`, a wrapper just created: route
 * paths and HTTP methods, `@Cron`/`@Interval` options, guards, interceptors, `SetMetadata` values and
 * transaction options that decorators below ours attached to the function before we wrapped it.
 * Decorators above ours run later and attach theirs to the wrapper directly.
 */
export function copyMethodMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
