/**
 * Builds the lock key from the method's own arguments (typed against the method). The result is used as it
 * is: wrap argument values in `encodeKeySegment()` to get the same protection templates give.
 */
export type LockKeyFunction<A extends unknown[] = any[]> = (...args: A) => string;

/**
 * Builds the keys of a multi-key lock from the method's own arguments (see `keys`). Wrap argument values in
 * `encodeKeySegment()` to get the same protection templates give.
 */
export type LockKeysFunction<A extends unknown[] = any[]> = (...args: A) => readonly string[];

/**
 * What a locked method does when the key stays taken for the whole `waitMs`:
 * - `'throw'`: reject with `LockNotAcquiredError` (an HTTP client sees 409 Conflict);
 * - `'skip'`: resolve `undefined` without running the method (cron jobs);
 * - a function: called with the same arguments (and `this`) instead of the method; its result is returned.
 */
export type OnLockedPolicy<A extends unknown[] = any[]> = 'throw' | 'skip' | ((...args: A) => unknown);

/**
 * Options of `@DistributedLock`: one key (`key`) or several taken all or nothing (`keys`), never both.
 * Unset durations come from the module options.
 */
export type DistributedLockOptions<A extends unknown[] = any[]> = SingleKeyLockOptions<A> | MultiKeyLockOptions<A>;

/** `@DistributedLock` on one key. */
export interface SingleKeyLockOptions<A extends unknown[] = any[]> extends LockedMethodOptions<A> {
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
  keys?: never;
  /**
   * A read/write lock on the key: `'read'` runs alongside other readers, `'write'` alone; a waiting writer
   * keeps new readers out. See `AcquireOptions.mode` for fencing, re-entry and upgrades (refused with
   * `LockUpgradeError`). A store without read/write locks stops the application's start.
   * @default undefined (a plain exclusive lock)
   */
  mode?: 'read' | 'write';
  /**
   * A semaphore on the key: at most this many calls hold it at once, across every instance. See
   * `AcquireOptions.permits`. Not with `mode`. A store without semaphores stops the application's start.
   * @default undefined (a plain exclusive lock)
   */
  permits?: number;
}

/** `@DistributedLock` on several keys at once, all or nothing. */
export interface MultiKeyLockOptions<A extends unknown[] = any[]> extends LockedMethodOptions<A> {
  /**
   * Several keys, each written as `key` is (`['account:{from}', 'account:{to}']`, every template checked at
   * startup), or a function of the arguments returning them. The call holds all of them or none: they are
   * taken one by one in one global order (the byte order of the key, whatever order they are named in;
   * duplicates collapse), so calls naming overlapping sets in different orders never deadlock; `waitMs`
   * bounds the whole acquisition, and keys taken before one that stays taken are given back. Each key has
   * its own lease and fencing token (`LockService.currentLeaseSet()`); losing any one is losing the call.
   */
  keys: readonly string[] | LockKeysFunction<A>;
  key?: never;
  /** Read/write locks are one key each. */
  mode?: never;
  /** Semaphores are one key each. */
  permits?: never;
}

/** What every `@DistributedLock` takes besides its key(s). */
export interface LockedMethodOptions<A extends unknown[] = any[]> {
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
