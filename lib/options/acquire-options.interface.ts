/** Per-call options; unset values come from the module options. */
export interface AcquireOptions {
  /** @default module `leaseMs` (30000) */
  leaseMs?: number;
  /**
   * 0 = one attempt. For a list of keys, the bound of the whole acquisition (each key waits for what is left).
   * @default module `waitMs` (5000)
   */
  waitMs?: number;
  /**
   * Keep the key at least this long after the grant, even if released earlier (cron de-duplication). For a
   * list of keys, each key; keys given back by an all-or-nothing attempt that failed are not kept.
   * @default 0
   */
  minHoldMs?: number;
  /**
   * Renew the lease in the background while it is held. Without it, only `extend()` keeps it alive.
   * @default true
   */
  autoRenew?: boolean;
  /**
   * A read/write lock: `'read'` shares the key with other readers, `'write'` holds it alone. A waiting
   * writer keeps new readers out (writer-preferring), so a stream of readers cannot starve it. Every grant,
   * either mode, has its own lease and a fencing token greater than every earlier grant of the key. A
   * read inside a write (or plain) lock of the same key joins it with `reentrant`; a write inside a read is
   * refused with `LockUpgradeError`. Not with a list of keys.
   * @default undefined (a plain exclusive lock)
   */
  mode?: 'read' | 'write';
  /**
   * A semaphore: at most this many holders of the key at once, each with its own lease and fencing token;
   * a holder that dies gives its permit back when its lease runs out. The number is the granting call's:
   * changed for a key in use, it applies from the next grant (holders above a lowered number keep their
   * permits until they release). Not with `mode`, nor with a list of keys.
   * @default undefined (a plain exclusive lock)
   */
  permits?: number;
  /** Stops waiting; an attempt that succeeds after the abort is released at once. */
  signal?: AbortSignal;
  /**
   * In `withLock`, `withLocks` (per key) and locked methods: if this call chain already holds the key, run inside that lease
   * instead of failing with `LockReentryError`. The lease is released once the outermost scope and every
   * scope joined onto it have ended (also a joined call that was not awaited).
   * @default false
   */
  reentrant?: boolean;
  /**
   * What events and metrics call this lock instead of its key (keys are unbounded, a metric attribute must
   * not be): a template like `'account:{id}'` or a purpose like `'transfer'`. Keep it low-cardinality.
   * @default undefined (a `@DistributedLock` method passes its key template, or `Class.method` for a key function)
   */
  name?: string;
}
