import type { LeaseHost } from './lease-host.interface.js';
import type { Lease } from './lease.js';

/**
 * One `lease.extend(leaseMs)`: a token-checked renewal to a new length while the watchdog's renewals of
 * the lease are held. No renewal may be in flight or start while the extension is: whichever reached the
 * store last would decide the TTL, and the local deadline could not know which one that was. Rejects with
 * `LeaseLostError` if the key is no longer ours, `LeaseReleasedError` once the lease was released, and the
 * store's error when the outcome is unknown (the lease then goes on as before).
 */
export async function extendOnce(lease: Lease, host: Pick<LeaseHost, 'store' | 'watchdog'>, leaseMs: number): Promise<void> {
  const { store, watchdog } = host;
  lease.assertExtendable();
  await watchdog.hold(lease);
  let resumed = false;
  try {
    lease.assertExtendable();
    const sentAt = Date.now();
    const [renewed] = await store.renew([{ key: lease.key, token: lease.token, leaseMs }]);
    if (renewed instanceof Error) throw renewed;
    if (!renewed) lease.onLost('rejected');
    // The deadline may have passed, or the lease been given up, while the renewal was in flight.
    lease.assertExtendable();
    lease.extended(sentAt, leaseMs);
    watchdog.watch(lease, sentAt);
    resumed = true;
    // A watchdog that already stopped (shutdown) declares the lease lost instead of watching it.
    if (lease.lostError) throw lease.lostError;
  } finally {
    if (!resumed) watchdog.resume(lease);
  }
}
