import type { LockShapeName } from '../lock-shape.js';

/**
 * What an entry of a lock's queue was made for: a plain (exclusive) lock, or one shape of a read/write
 * lock or semaphore.
 */
export type QueueShape = 'plain' | LockShapeName;

/**
 * One entry of a lock's queue, as the admission rule reads it. `K` is how the store names the entry (an
 * etcd key, a ZooKeeper node's path); the rule only hands it back in a `QueueWait`.
 */
export interface QueuedShape<K> {
  readonly key: K;
  readonly shape: QueueShape;
  /** A permit entry's N (1 when the store could not read it: it then waits to be first, never overfills); 0 otherwise. */
  readonly permits: number;
}

/**
 * The one rule of a lock's queue, for every shape, in every store that keeps the queue itself (etcd's
 * `recipes.RWMutex` and ZooKeeper's shared-lock recipe, extended to semaphores): entries are in creation
 * order (etcd's create revision, ZooKeeper's sequence), and the holders are its longest front part in
 * which every entry is admitted by the entries before it:
 * - a plain entry or a writer only when nothing is before it;
 * - a reader when only readers are before it;
 * - a permit entry when only permit entries are before it, fewer than its own N.
 * So an entry behind a waiter never holds before it (FIFO for every shape and across shapes: a waiting
 * writer keeps later readers out, which is the writer preference), and holding is for good: entries
 * before a holder only ever go, never come (a new entry is created behind every existing one), so nothing
 * can un-admit it. That is why a waiter may act on a grant it read, and why an entry's creation order is
 * a fencing order that increases with the order grants happen in: an entry is admitted only once every
 * entry before it holds or is gone, so a grant that comes after another one's end always has the later
 * entry.
 */
export function holdingCount(entries: ReadonlyArray<QueuedShape<unknown>>): number {
  const first = entries[0];
  if (!first) return 0;
  if (first.shape === 'plain' || first.shape === 'write') return 1;
  // Readers behind readers, permit entries behind fewer permit entries than their own N: every entry
  // before a holder holds, so one pass suffices.
  let count = 1;
  for (; count < entries.length; count++) {
    const next = entries[count]!;
    if (next.shape !== first.shape || (next.shape === 'permits' && count >= next.permits)) break;
  }
  return count;
}

/** What a waiter waits for, from the entries before it (etcd's `waitOnLastRev`, and a semaphore's count). */
export type QueueWait<K> =
  /** Nothing: it holds. */
  | { readonly kind: 'granted' }
  /** The deletion of one entry: the last one before it that it cannot share the lock with. */
  | { readonly kind: 'deletion'; readonly key: K }
  /** A change of the permit entry just before it, itself waiting: a write when that one is granted, or its deletion. */
  | { readonly kind: 'change'; readonly key: K }
  /** The deletion of any one of these holders: the first permit waiter behind N of them. */
  | { readonly kind: 'any-deletion'; readonly keys: readonly K[] };

/**
 * What an entry of `shape` (and `permits`) waits for behind `earlier`, the entries before it in queue
 * order. Plain entries and writers wait for the last entry before them, readers for the last entry before
 * them that is not a reader (both as in `recipes.RWMutex` and ZooKeeper's recipe: a deletion of any other
 * entry cannot admit them, and the next look finds the next such entry). A permit entry behind an entry of
 * another shape waits the same way. Behind permit entries only: if the one just before it waits, for that
 * one's grant or end (the grant's mark, see the stores' queues); if they all hold, for any one of them to
 * go. A wait thus watches one entry, or the holders before it for the one waiter whose next grant any
 * release may make.
 */
export function queueWait<K>(earlier: ReadonlyArray<QueuedShape<K>>, shape: QueueShape, permits = 0): QueueWait<K> {
  if (earlier.length === 0) return { kind: 'granted' };
  const last = earlier[earlier.length - 1]!;
  if (shape === 'plain' || shape === 'write') return { kind: 'deletion', key: last.key };
  const shares = shape === 'read' ? 'read' : 'permits';
  const blocker = findLast(earlier, (entry) => entry.shape !== shares);
  if (blocker) return { kind: 'deletion', key: blocker.key };
  if (shape === 'read') return { kind: 'granted' };
  if (holdingCount(earlier) < earlier.length) return { kind: 'change', key: last.key };
  if (earlier.length < permits) return { kind: 'granted' };
  return { kind: 'any-deletion', keys: earlier.map((entry) => entry.key) };
}

function findLast<T>(items: readonly T[], test: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return items[i];
  return undefined;
}
