import type { LeaseLostReason } from '../errors/lease-lost.error.js';
import type { LockShapeName } from '../stores/lock-shape.js';

/** What the events of a read/write lock or a semaphore add; absent for a plain lock. */
export interface LockShapeFields {
  /** `'read'`, `'write'` or `'permits'`: low cardinality, a metric attribute. */
  readonly shape?: LockShapeName;
  /** For a semaphore: the permits the call asked for (a number fixed in code: low cardinality). */
  readonly permits?: number;
}

/** Fields every event about one lease carries. */
export interface LockLeaseEvent extends LockShapeFields {
  /** The lock key, without the module's prefix. Unbounded: never use it as a metric attribute by default. */
  readonly key: string;
  /**
   * The low-cardinality name of what is locked: `AcquireOptions.name`, which for a `@DistributedLock`
   * method defaults to its key template (`'order:{orderId}'`) or, with a key function, to `Class.method`.
   * Undefined for a `LockService` call without a name.
   */
  readonly name: string | undefined;
  readonly fencingToken: number;
  /** Short digest of the ownership token; the token itself never leaves the lease. */
  readonly tokenDigest: string;
}

/**
 * How a waiting acquisition was woken between store attempts: by a release `notification` (pub/sub,
 * LISTEN/NOTIFY), by its fallback `backoff` timer (a notification was missed, or none came), at the holder's
 * `expiry` (the holder's remaining TTL ran out: it crashed or released without notifying), or at its own
 * `deadline` for a last attempt. Acquisitions through a store's own queue (etcd, ZooKeeper) report none.
 */
export interface LockWakeUps {
  readonly notification: number;
  readonly backoff: number;
  readonly expiry: number;
  readonly deadline: number;
}

/** What every ending of an acquisition (granted, not acquired, store unavailable) reports. */
export interface LockAcquisitionEvent extends LockShapeFields {
  readonly key: string;
  /** See {@link LockLeaseEvent.name}. */
  readonly name: string | undefined;
  /** From the call to its outcome. */
  readonly waitedMs: number;
  /** Store calls this acquisition took; 1 when the key was free. Retries are `attempts - 1`. */
  readonly attempts: number;
  readonly wakeUps: LockWakeUps;
}

export interface LockAcquiredEvent extends LockLeaseEvent, LockAcquisitionEvent {}

/**
 * Why an acquisition ended without a lease and without a store failure: the key stayed `taken` for the whole
 * `waitMs` (`LockNotAcquiredError`, `tryAcquire` returning null, `onLocked`), the caller's signal `aborted`
 * it, or the application was shutting down (`shutdown`).
 */
export type LockNotAcquiredReason = 'taken' | 'aborted' | 'shutdown';

export interface LockNotAcquiredEvent extends LockAcquisitionEvent {
  readonly reason: LockNotAcquiredReason;
}

/** The store failed during the acquisition (fail closed: the protected code did not run). */
export interface LockStoreUnavailableEvent extends LockAcquisitionEvent {
  readonly error: unknown;
}

export interface LockReleasedEvent extends LockLeaseEvent {
  /** From the grant to the release. */
  readonly heldMs: number;
  /** How long the key stays taken after release because of `minHoldMs`. */
  readonly keptMs: number;
}

export interface LockRenewedEvent extends LockLeaseEvent {
  readonly expiresAt: number;
  /** Round trip of the renewal (one batched store call may renew many leases). */
  readonly latencyMs: number;
}

/** A renewal whose outcome is unknown (store error or timeout); the watchdog retries until the deadline. */
export interface LockRenewFailedEvent extends LockLeaseEvent {
  readonly error: unknown;
  readonly latencyMs: number;
}

export interface LockLostEvent extends LockLeaseEvent {
  readonly reason: LeaseLostReason;
  /** From the grant to the moment the loss was learnt. */
  readonly heldMs: number;
  /** Set when a watchdog renewal was refused (reason `rejected`): that renewal's round trip. */
  readonly renewLatencyMs?: number;
}

export interface LockReleaseFailedEvent extends LockLeaseEvent {
  readonly error: unknown;
  readonly heldMs: number;
}

/** The locked scope ended inside a transaction: the release waits for its commit or rollback. */
export interface LockDeferredEvent extends LockLeaseEvent {
  /** From the grant to the end of the scope; the lease stays held (and renewed) until the transaction ends. */
  readonly heldMs: number;
}

export interface LockContentionEvent extends LockShapeFields {
  readonly key: string;
  /** See {@link LockLeaseEvent.name}. */
  readonly name: string | undefined;
  /** Remaining lease of the current holder, -1 when unknown. */
  readonly holderTtlMs: number;
}

export interface LockEventMap {
  acquired: LockAcquiredEvent;
  'not-acquired': LockNotAcquiredEvent;
  'store-unavailable': LockStoreUnavailableEvent;
  released: LockReleasedEvent;
  renewed: LockRenewedEvent;
  'renew-failed': LockRenewFailedEvent;
  lost: LockLostEvent;
  'release-failed': LockReleaseFailedEvent;
  deferred: LockDeferredEvent;
  contention: LockContentionEvent;
}

export type LockEventName = keyof LockEventMap;

// A record, so that adding an event to the map without naming it here is a compile error.
const EVENT_NAMES: Record<LockEventName, true> = {
  acquired: true,
  'not-acquired': true,
  'store-unavailable': true,
  released: true,
  renewed: true,
  'renew-failed': true,
  lost: true,
  'release-failed': true,
  deferred: true,
  contention: true,
};

/** Every event name, in the order of {@link LockEventMap}. */
export const LOCK_EVENT_NAMES: readonly LockEventName[] = Object.freeze(Object.keys(EVENT_NAMES) as LockEventName[]);
