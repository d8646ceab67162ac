import type { AcquireOptions } from '../service/lock.service.js';
import type { LockShape } from '../stores/lock-shape.js';
import { LOCKED_METHODS } from '../lock.internal-constants.js';
import type { DistributedLockOptions, OnLockedPolicy } from './distributed-lock-options.interface.js';


type AnyFunction = (...args: any[]) => any;

/** What the explorer makes of a locked method at startup: checked options and a compiled key. */
export interface PreparedLock {
  /** The key (without the module prefix) for one call, or the keys of a `keys` lock. Throws `LockKeyError`. */
  resolveKey(thisArg: unknown, args: unknown[]): string | readonly string[];
  readonly acquire: AcquireOptions;
  /** `mode` or `permits`, checked: the explorer asks the application's store whether it offers them. */
  readonly shape: LockShape | undefined;
  readonly onLocked: OnLockedPolicy;
}

/**
 * One `@DistributedLock` method, recorded when the decorator runs. It knows the method as written (for
 * parameter names and async detection) and the function the wrapper calls (which may be another
 * decorator's wrapper). Validation and key compilation happen once, at startup, through `prepared`.
 */
export class LockedMethod {
  /** `ClassName.method`, for messages. */
  readonly label: string;
  /** Filled at startup by the explorer (or on first use). */
  prepared?: PreparedLock;
  /** Set when a call got a plain value back (`'number'`, `'null'`…): the method is sync and is refused. */
  returnedPlainValue?: string;

  constructor(
    readonly prototype: object,
    readonly propertyKey: string | symbol,
    readonly options: Readonly<DistributedLockOptions>,
    /** What the wrapper calls: the descriptor's value when the decorator ran. */
    readonly invoke: AnyFunction,
    /** The method as written in the class body. */
    readonly source: AnyFunction,
    /** `design:returntype` emitted by TypeScript, if any. */
    readonly declaredReturnType: unknown,
  ) {
    this.label = `${prototype.constructor?.name || '<anonymous class>'}.${String(propertyKey)}`;
  }
}

/** Records `method` on its prototype; the accessor reads these back at startup. */
export function recordLockedMethod(method: LockedMethod): void {
  let own: Map<string | symbol, LockedMethod> | undefined = Reflect.getOwnMetadata(LOCKED_METHODS, method.prototype);
  if (!own) {
    own = new Map();
    Reflect.defineMetadata(LOCKED_METHODS, own, method.prototype);
  }
  own.set(method.propertyKey, method);
}

/** The method already locked under `propertyKey` on this very prototype, if any. */
export function ownLockedMethod(prototype: object, propertyKey: string | symbol): LockedMethod | undefined {
  return (Reflect.getOwnMetadata(LOCKED_METHODS, prototype) as Map<string | symbol, LockedMethod> | undefined)?.get(propertyKey);
}
