import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import type { LeaseFrame } from '../lease/lease-context.js';
import type { Lease } from '../lease/lease.js';
import { durationOption } from '../support/duration-option.js';

/**
 * Takes one key within `waitMs` (the single-key acquisition): a lease, null when a one-shot try found it
 * taken, or, inside a transaction, the frame of the lease a sibling of it left to the transaction meanwhile.
 */
export type AcquireOneKey = (key: string, waitMs: number) => Promise<Lease | LeaseFrame | null>;

/** What an all-or-nothing acquisition got: the leases it took, in key order, and the frames it is to join. */
export interface AcquiredKeys {
  readonly taken: readonly Lease[];
  readonly joined: ReadonlyMap<string, LeaseFrame>;
}

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
export async function acquireKeys(keys: readonly string[], waitMs: number, acquireOne: AcquireOneKey): Promise<AcquiredKeys | null> {
  durationOption('waitMs', waitMs, 0);
  const startedAt = Date.now();
  const deadline = startedAt + waitMs;
  const taken: Lease[] = [];
  const joined = new Map<string, LeaseFrame>();
  try {
    for (const key of keys) {
      const got = await acquireOne(key, Math.max(0, deadline - Date.now()));
      if (!got) {
        await giveBack(taken);
        return null;
      }
      if (isFrame(got)) joined.set(key, got);
      else taken.push(got);
    }
  } catch (error) {
    await giveBack(taken);
    if (error instanceof LockNotAcquiredError) throw new LockNotAcquiredError(error.key, Date.now() - startedAt);
    throw error;
  }
  return { taken, joined };
}

function isFrame(got: Lease | LeaseFrame): got is LeaseFrame {
  return 'parent' in got;
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
