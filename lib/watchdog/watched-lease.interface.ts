import type { LeaseLostReason } from '../errors/lease-lost.error.js';

/** What the watchdog needs from a lease: how to renew it and whom to tell about the outcome. */
export interface WatchedLease {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
  readonly renewIntervalMs: number;
  /** False for leases kept alive by explicit `extend()` calls only; their deadline is still watched. */
  readonly autoRenew: boolean;
  onRenewed(sentAt: number): void;
  onRenewFailed(error: unknown): void;
  onLost(reason: LeaseLostReason): void;
}
