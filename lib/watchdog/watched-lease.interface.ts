import type { LeaseLostReason } from '../errors/lease-lost.error.js';

/** What the watchdog needs from a lease: how to renew it and whom to tell about the outcome. */
export interface WatchedLease {
  readonly key: string;
  readonly token: string;
  /** The length the next renewal asks for; it may change between renewals (`extend()`). */
  readonly leaseMs: number;
  /** Follows `leaseMs`. */
  readonly renewIntervalMs: number;
  /** When it counts as lost unless renewed (epoch ms, clock drift allowed for); follows grants and renewals. */
  readonly deadline: number;
  /** False for leases kept alive by explicit `extend()` calls only; their deadline is still watched. */
  readonly autoRenew: boolean;
  /** A renewal sent at `sentAt` asking for `leaseMs` got through, `latencyMs` after it was sent. */
  onRenewed(sentAt: number, leaseMs: number, latencyMs: number): void;
  onRenewFailed(error: unknown, latencyMs: number): void;
  /** `renewLatencyMs`: when a renewal was refused, its round trip. */
  onLost(reason: LeaseLostReason, renewLatencyMs?: number): void;
  /** The watchdog's entry for the lease while it is watched (see `WatchedLeases`); nobody else's to touch. */
  watchSlot?: unknown;
}
