import type { LockEvents } from '../events/lock-events.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { LeaseWatchdog } from '../watchdog/lease.watchdog.js';
import type { LeaseContext } from './lease-context.js';
import type { Lease } from './lease.js';

/**
 * How a lease's scopes end: handed to the transaction they ran in, if any, or released (implemented in
 * transactions/lease-deferral.ts, which is where everything about release after commit lives).
 */
export interface TransactionHold {
  /**
   * True when a transaction active here now holds `lease` too, until it has committed or rolled back.
   * False outside transactions or for a lease already lost. A broken integration's error propagates.
   */
  hold(lease: Lease): boolean;
  /**
   * The scope that took `lease` has ended: released now, or held by the transaction it ran in until that
   * completes. Rejects with `LeaseLostError` for a lost lease and with a broken integration's error.
   */
  endScope(lease: Lease): Promise<void>;
}

/** The services a lease reports to; supplied by the LockService that granted it. */
export interface LeaseHost {
  readonly store: LockStore;
  /** For `extend()`: renewals are held while an extension is in flight. */
  readonly watchdog: LeaseWatchdog;
  readonly events: LockEvents;
  /** The async context of the application's scopes: a release from inside one must not wait for itself. */
  readonly context: LeaseContext;
  readonly transactions: TransactionHold;
  /** The module's `renewIntervalMs`, if set. */
  readonly renewIntervalMs: number | undefined;
  /** The lease was released or lost: it is no longer the application's to give back at shutdown. */
  settled(lease: Lease): void;
}

/** @internal Everything the store's grant decided. */
export interface LeaseGrant {
  readonly key: string;
  /** `AcquireOptions.name`, for events. */
  readonly name: string | undefined;
  readonly token: string;
  readonly fencingToken: number;
  readonly leaseMs: number;
  readonly minHoldMs: number;
  readonly autoRenew: boolean;
  /** When the granting call was sent: the store's TTL started no earlier. */
  readonly sentAt: number;
  /** The TTL the store started then: `leaseMs`, or less for a queue's hand-off (renewals ask for `leaseMs`). */
  readonly ttlMs: number;
}
