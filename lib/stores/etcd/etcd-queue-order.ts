import { decodeWaiterValue, type EtcdKeyLayout, type QueueShape } from './etcd-key-layout.js';
import { revision, type KeyValue } from './txns/etcd-rpc.js';

/** One key of a lock's queue, as the admission rule reads it. */
export interface QueueEntry {
  readonly key: Buffer;
  readonly createRevision: number;
  readonly shape: QueueShape;
  /** A permit key's N (1 when its value is damaged: it then waits to be first, never overfills); 0 otherwise. */
  readonly permits: number;
}

export function queueEntryOf(layout: EtcdKeyLayout, kv: KeyValue): QueueEntry {
  // A key of the lock's range this layout did not write (by hand, say) counts as exclusive: it holds its place.
  const shape = layout.parse(kv.key)?.shape ?? 'plain';
  const permits = shape === 'permits' ? (decodeWaiterValue(kv.value).permits ?? 1) : 0;
  return { key: kv.key, createRevision: revision(kv.create_revision), shape, permits };
}

/**
 * The one rule of a lock's queue, for every shape (etcd's `recipes.RWMutex` extended to semaphores): keys
 * are in create-revision order, and the holders are its longest front part in which every key is admitted
 * by the keys before it:
 * - a plain key or a writer only when nothing is before it;
 * - a reader when only readers are before it;
 * - a permit key when only permit keys are before it, fewer than its own N.
 * So a key behind a waiter never holds before it (FIFO for every shape and across shapes: a waiting writer
 * keeps later readers out, which is the writer preference), and holding is for good: keys before a holder
 * only ever go, never come (a new key is created behind every existing one), so nothing can un-admit it.
 * That is why a waiter may act on a grant it read, and why a key's create revision is a fencing token that
 * increases with the order grants happen in: a key is admitted only once every key before it holds or is
 * gone, so a grant that comes after another one's end always has the later key.
 */
export function holdingCount(entries: readonly QueueEntry[]): number {
  const first = entries[0];
  if (!first) return 0;
  if (first.shape === 'plain' || first.shape === 'write') return 1;
  // Readers behind readers, permit keys behind fewer permit keys than their own N: every key before a
  // holder holds, so one pass suffices.
  let count = 1;
  for (; count < entries.length; count++) {
    const next = entries[count]!;
    if (next.shape !== first.shape || (next.shape === 'permits' && count >= next.permits)) break;
  }
  return count;
}

/** What a waiter waits for, from the keys before it (etcd's `waitOnLastRev`, and a semaphore's count). */
export type QueueWait =
  /** Nothing: it holds. */
  | { readonly kind: 'granted' }
  /** The deletion of one key: the last one before it that it cannot share the lock with. */
  | { readonly kind: 'deletion'; readonly key: Buffer }
  /** A change of the permit key just before it, itself waiting: a put when that one is granted, or its deletion. */
  | { readonly kind: 'change'; readonly key: Buffer }
  /** The deletion of any one of these holders: the first permit waiter behind N of them. */
  | { readonly kind: 'any-deletion'; readonly keys: readonly Buffer[] };

/**
 * What a key of `shape` (and `permits`) waits for behind `earlier`, the keys before it in queue order.
 * Plain keys and writers wait for the last key before them, readers for the last key before them that is
 * not a reader (both as in `recipes.RWMutex`: a deletion of any other key cannot admit them, and the next
 * look finds the next such key). A permit key behind a key of another shape waits the same way. Behind
 * permit keys only: if the one just before it waits, for that one's grant or end (its mark, see the shaped
 * queue); if they all hold, for any one of them to go. A wait thus watches one key, or the lock's
 * deletions for the one waiter whose next grant any release may make.
 */
export function queueWait(earlier: readonly QueueEntry[], shape: QueueShape, permits = 0): QueueWait {
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
