import { Inject } from '@nestjs/common';
import type { LockShape, LockShapeName } from './lock-shape.js';

export type { LockShape, LockShapeName } from './lock-shape.js';

/** The store granted the lock; `fencingToken` is greater than every earlier grant for the same key. */
export interface LockGranted {
  readonly acquired: true;
  readonly fencingToken: number;
}

/** Someone else holds the key; `ttlMs` is its remaining lease (-1 when the store cannot tell). */
export interface LockDenied {
  readonly acquired: false;
  readonly ttlMs: number;
}

export type AcquireResult = LockGranted | LockDenied;

export interface RenewRequest {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
}

/**
 * One renewal's outcome: `true` renewed, `false` the token no longer owns the key (the lease is lost), or
 * the error that kept this one request from an answer (say its shard was unreachable): unknown, so the
 * watchdog retries it until the lease's local deadline. A failure on one shard costs only that shard's
 * requests; a store that cannot answer at all may reject the whole call instead.
 */
export type RenewOutcome = boolean | Error;

/** What `forceRelease` did: the lock it took away, or why it took nothing. */
export type ForceReleaseResult =
  | { readonly released: true; readonly lock: HeldLock }
  | { readonly released: false; readonly reason: 'not-held' }
  /** The key is held under another fencing token than the operator saw: somebody new holds it. */
  | { readonly released: false; readonly reason: 'fencing-mismatch'; readonly current: HeldLock };

/** Held locks of one key prefix other than the store's (see `LockStore.heldUnderOtherPrefixes`). */
export interface PrefixCount {
  readonly prefix: string;
  readonly held: number;
}

/** What a bounded look for other prefixes found, fullest prefix first. */
export interface PrefixSurvey {
  readonly prefixes: readonly PrefixCount[];
  /** False when the look stopped at one of its bounds: there may be more, and the counts are lower bounds. */
  readonly complete: boolean;
}

export interface PrefixSurveyLimits {
  /**
   * Keys of the server to look at, at most.
   * @default 10000
   */
  readonly maxKeys?: number;
}

/** An acquisition that may wait in a queue the store keeps itself (see `LockStore.acquireQueued`). */
export interface QueuedAcquireRequest {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
  readonly holder: string;
  /** Epoch ms: give up then (withdrawing from the queue) and resolve with the denial; never wait longer. */
  readonly deadline: number;
  /** Aborting withdraws from the queue and rejects with the signal's reason; a grant that races it is released. */
  readonly signal?: AbortSignal;
}

export interface QueuedAcquireOutcome {
  readonly result: AcquireResult;
  /** Store round trips this acquisition took (for events and metrics). */
  readonly attempts: number;
  /**
   * Epoch ms no later than the moment the store started the granted lease's TTL: the lease's local deadline
   * is counted from here, so it must err early (for a single call: when it was sent).
   */
  readonly leaseStartedAt: number;
  /**
   * The TTL the store started at `leaseStartedAt`, when shorter than the `leaseMs` asked for: a fair
   * queue's hand-off gives the next waiter no more than its short heartbeat lease, so that a waiter that
   * died meanwhile does not hold the key for a whole lease. The local deadline is counted with it, and the
   * first renewal (which asks for `leaseMs`) comes within a third of it.
   * @default the request's leaseMs
   */
  readonly grantedTtlMs?: number;
  /**
   * What woke the waiter for the call that brought its grant, as the retry loop's wake-ups are counted:
   * `notification` the store told it (a hand-off message), `backoff` one of its periodic looks (so the
   * message never came: the channel is down, or it was missed), `expiry` a look timed at the holder's TTL,
   * `deadline` a grant kept at the end of the wait. Absent when the first call granted, or when the store
   * does not say (its acquisitions then report no wake-ups).
   */
  readonly grantedOn?: QueuedWakeUpCause;
}

/** See {@link QueuedAcquireOutcome.grantedOn}; the same names as the acquisition events' `wakeUps`. */
export type QueuedWakeUpCause = 'notification' | 'backoff' | 'expiry' | 'deadline';

/** What the store knows about a held key, for the runbook and for tests. */
export interface HeldLock {
  readonly key: string;
  readonly fencingToken: number;
  readonly ttlMs: number;
  readonly holder: string;
  /**
   * For a read/write lock or a semaphore: the shape of this hold ('read', 'write', 'permits'); such a key
   * is listed once per holder, each with its own token and TTL. Absent for a plain lock.
   */
  readonly shape?: LockShapeName;
}

/**
 * The lease protocol every store implements. Keys are the user's keys (the store adds its prefix);
 * tokens are per-acquisition secrets; every mutating call is token-checked and atomic.
 */
export interface LockStore {
  /** Creates the key with its TTL and issues the fencing token in one atomic step. */
  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult>;
  /**
   * Optional, the capability of read/write locks and semaphores: one grant of `key` in `shape` (see
   * {@link LockShape}), with its own TTL and a fencing token from the counter plain grants of the key use,
   * in one atomic step; holds whose TTL ran out are given back inside that step. A store that offers it
   * releases and renews such a grant through `release` and `renew` by its token, like a plain one, and a
   * plain lock and a shaped one on the same key exclude each other. `LockService` refuses `mode` and
   * `permits` with `LockConfigError` on a store without it.
   */
  acquireShared?(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult>;
  /**
   * Deletes the key if `token` still owns it. With `keepMs > 0` the key is kept that much longer instead
   * (minimum hold for cron de-duplication). Returns false when the token no longer owned the key.
   */
  release(key: string, token: string, keepMs: number): Promise<boolean>;
  /**
   * Sets each key's TTL to its `leaseMs` where the token still owns it; one outcome per request, in
   * request order (see {@link RenewOutcome}). Never re-creates a missing key.
   */
  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]>;
  /**
   * Optional: a store-native fair wait, for stores that keep their own FIFO of waiters (etcd's predecessor
   * watch, a Redis-side waiter queue). When present, `LockService` calls it for every acquisition allowed
   * to wait (`waitMs > 0`) instead of retrying `acquire` on release notifications, after one plain
   * `acquire` where {@link queuesAtOnce} allows it. Store errors reject with `LockStoreUnavailableError`;
   * the store retries transient ones itself until `deadline`.
   */
  acquireQueued?(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome>;
  /**
   * Optional, with `acquireQueued`: false when a waiting acquisition of `key` may first make one plain
   * `acquire` (which, on such a store, takes the key only when it is free: with Redis' `fair` only when
   * nobody stands in line either) and queue only if that is turned away: the key was not found queued lately, so it is most likely free, and the plain attempt is
   * the cheaper call. True (or absent) sends the acquisition straight to `acquireQueued`.
   */
  queuesAtOnce?(key: string): boolean;
  /**
   * Optional, with `acquireQueued`: true when only an application's first waiter for a key should stand in
   * the store's queue, the others waiting behind it in the application (first come first served there) and
   * joining the store's queue one at a time. Bounds what a store pays per waiter when its waiters look at
   * the whole queue (the Redis queue without `fair`); absent or false, every waiter queues in the store.
   */
  readonly queuesLocalHeads?: boolean;
  /**
   * Optional, with `acquireShared`: a store-native FIFO wait for grants in `shape`, as `acquireQueued` is
   * for plain ones (same request, same outcome, same clean-up of an unknown outcome). Used for every
   * shaped acquisition allowed to wait when {@link queuesShape} says so for its shape; otherwise shaped
   * waiters retry `acquireShared` on release notifications. `queuesAtOnce`, when present, applies to it too.
   */
  acquireSharedQueued?(request: QueuedAcquireRequest, shape: LockShape): Promise<QueuedAcquireOutcome>;
  /** Optional, with `acquireSharedQueued`: whether waiters of `shape` go through it (absent: they do). */
  queuesShape?(shape: LockShape): boolean;
  /** Calls `listener` whenever `key` is released; resolves once notifications are flowing. */
  onRelease(key: string, listener: () => void): Promise<() => void>;
  inspect(key: string): Promise<HeldLock | null>;
  /**
   * Held locks whose key matches `match` (a glob: `*` any run of characters, `?` one), sorted by key.
   * For the runbook: it may walk the whole store, so it is not for hot paths.
   */
  list(match?: string): Promise<HeldLock[]>;
  /**
   * Optional, for the runbook when a listing finds nothing: held locks on the same server under other key
   * prefixes than this store's, by prefix, from a bounded walk (the operator may have typed the wrong
   * `--prefix`). Counts only; never a token.
   */
  heldUnderOtherPrefixes?(limits?: PrefixSurveyLimits): Promise<PrefixSurvey>;
  /**
   * The runbook's deliberate override: deletes the key whoever holds it and wakes its waiters. With
   * `fencingToken`, only if the key is still held under that token (compare-and-delete), so a holder that
   * took over after the operator looked is never the one removed.
   */
  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult>;
  /** One round trip to the store; rejects with `LockStoreUnavailableError` when it does not answer. */
  ping(): Promise<void>;
  /** Closes what the store opened; connections handed in by the user stay open. */
  close(): Promise<void>;
}

/** Injection token for the module's {@link LockStore}. */
export const LockStore = Symbol('LockStore');

/** Injects the module's {@link LockStore}. */
export const InjectLockStore = (): ParameterDecorator => Inject(LockStore);
