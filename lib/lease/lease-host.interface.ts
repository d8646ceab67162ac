import type { LockEvents } from '../events/lock-events.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';
import type { LeaseWatchdog } from '../watchdog/lease.watchdog.js';
import type { Lease } from './lease.js';

/** The services a lease reports to; supplied by the LockService that granted it. */
export interface LeaseHost {
  readonly store: LockStore;
  readonly watchdog: LeaseWatchdog;
  readonly events: LockEvents;
  readonly transactions: TransactionSynchronizer;
  /** The module's `renewIntervalMs`, if set. */
  readonly renewIntervalMs: number | undefined;
  settled(lease: Lease): void;
  /** A lease deferred to the current transaction, kept there so the transaction owns its key. */
  retainInTransaction(lease: Lease): void;
  /** How many scopes of `lease` the current call chain is running (0 outside them). */
  scopesHere(lease: Lease): number;
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
  /** The TTL the store started then, when shorter than `leaseMs` (a queue's hand-off); renewals ask for `leaseMs`. */
  readonly ttlMs?: number;
}
