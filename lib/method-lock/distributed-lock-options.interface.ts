/**
 * Builds the lock key from the method's own arguments (typed against the method). The result is used as it
 * is: wrap argument values in `encodeKeySegment()` to get the same protection templates give.
 */
export type LockKeyFunction<A extends unknown[] = any[]> = (...args: A) => string;

/**
 * What a locked method does when the key stays taken for the whole `waitMs`:
 * - `'throw'`: reject with `LockNotAcquiredError` (an HTTP client sees 409 Conflict);
 * - `'skip'`: resolve `undefined` without running the method (cron jobs);
 * - a function: called with the same arguments (and `this`) instead of the method; its result is returned.
 */
export type OnLockedPolicy<A extends unknown[] = any[]> = 'throw' | 'skip' | ((...args: A) => unknown);

/** Options of `@DistributedLock`. Unset durations come from the module options. */
export interface DistributedLockOptions<A extends unknown[] = any[]> {
  /**
   * `'order:{orderId}'` (placeholders name parameters; paths like `{dto.order.id}` reach into them; values
   * are encoded so they cannot collide or escape their namespace), or a function of the arguments.
   * The module's `keyPrefix` is prepended; the rest may be at most 512 bytes (`MAX_LOCK_KEY_BYTES`).
   *
   * Parameter names are read once, at startup, from the method's source (`Function.prototype.toString`).
   * Compilers keep them; a minifier that renames parameters makes startup fail with "names no parameter"
   * (never a wrong key). Use the function form in that case: `key: (orderId: string) => ...`.
   * Accepted placeholder values: non-empty strings, finite numbers, bigints (`42` and `'42'` are the same
   * key); `undefined`, `null`, `''`, objects and arrays throw `LockKeyError` at call time.
   */
  key: string | LockKeyFunction<A>;
  /**
   * How long to wait for a held key; 0 = one attempt.
   * @default module `waitMs` (5000)
   */
  waitMs?: number;
  /**
   * Lease length, renewed while the method runs.
   * @default module `leaseMs` (30000)
   */
  leaseMs?: number;
  /**
   * Keep the key at least this long after acquisition, even when the method finishes earlier, so another
   * instance whose clock is a little behind does not run the same cron tick again.
   * @default 0
   */
  minHoldMs?: number;
  /**
   * If this async call chain already holds the key, join that lease instead of failing fast with
   * `LockReentryError`. Released when the outermost locked call ends.
   * @default false
   */
  reentrant?: boolean;
  /** @default 'throw' */
  onLocked?: OnLockedPolicy<A>;
  /**
   * What events and metrics call this lock instead of its key (keys are unbounded; metric attributes must
   * not be). Keep it low-cardinality.
   * @default the key template (`'order:{orderId}'`), or `Class.method` when `key` is a function
   */
  name?: string;
}
