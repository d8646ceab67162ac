import type { LockLeaseEvent } from '../events/lock-event.types.js';

/**
 * Tells apart the leases of one application from their events alone: fencing tokens only grow per key, and
 * the token digest separates the rare grants that share one (a store that lost its counters).
 */
export function leaseIdentity(event: LockLeaseEvent): string {
  return `${event.fencingToken}\u0000${event.tokenDigest}\u0000${event.key}`;
}
