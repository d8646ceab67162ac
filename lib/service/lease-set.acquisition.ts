import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LeaseSet } from '../lease/lease-set.js';
import type { Lease } from '../lease/lease.js';
import { durationOption } from '../support/duration-option.js';

/** Takes one key within `waitMs` (the single-key acquisition): a lease, or null when a one-shot try found it taken. */
export type AcquireOneKey = (key: string, waitMs: number) => Promise<Lease | null>;

const ignore = (): void => undefined;

/**
 * All or nothing: takes `keys` (already in the global order, see `lockOrder`) one after another, each through
 * the ordinary single-key acquisition — one store call per key, so keys in different Redis Cluster slots
 * need no common script — and holds each while waiting for the next, which the global order makes
 * deadlock-free. `waitMs` bounds the whole acquisition: each key waits for what is left of it (a key reached
 * after it ran out still gets its one attempt). When a key stays taken, the call is aborted or the store
 * fails, every key already taken is given back (token-checked, at once: `minHoldMs` protects work that ran,
 * and none did) before the call ends: null for a one-shot try, otherwise the error, a `LockNotAcquiredError`
 * naming the key that stayed taken and the time the whole call waited.
 */
export async function acquireLeaseSet(keys: readonly string[], waitMs: number, acquireOne: AcquireOneKey): Promise<LeaseSet | null> {
  durationOption('waitMs', waitMs, 0);
  const startedAt = Date.now();
  const deadline = startedAt + waitMs;
  const taken: Lease[] = [];
  try {
    for (const key of keys) {
      const lease = await acquireOne(key, Math.max(0, deadline - Date.now()));
      if (!lease) {
        await giveBack(taken);
        return null;
      }
      taken.push(lease);
    }
  } catch (error) {
    await giveBack(taken);
    if (error instanceof LockNotAcquiredError) throw new LockNotAcquiredError(error.key, Date.now() - startedAt);
    throw error;
  }
  return new LeaseSet(taken);
}

/**
 * A failed release is reported by the lease itself ('release-failed': the key expires after its lease), and a
 * lease lost meanwhile has nothing left to give back: neither may replace the reason the acquisition failed.
 */
async function giveBack(taken: readonly Lease[]): Promise<void> {
  await Promise.all(
    taken.map((lease) => {
      lease.waiveMinHold();
      return lease.release().catch(ignore);
    }),
  );
}
