/**
 * The shape of a lock other than the plain exclusive one, as a store receives it (see
 * `LockStore.acquireShared`):
 * - `{ mode: 'read' }`: shared with other readers, never with a writer;
 * - `{ mode: 'write' }`: alone; a waiting writer keeps new readers out (writer-preferring);
 * - `{ permits: n }`: one of at most `n` holders at once (a semaphore).
 * Each grant is its own lease with its own ownership token and fencing token.
 */
export type LockShape =
  | {
      readonly mode: 'read' | 'write';
      readonly permits?: undefined;
      /**
       * For a writer: how long, once turned away, it keeps new readers out unless it asks again (each of
       * its attempts starts this anew). 0 for an attempt that will not be repeated (`tryAcquire`), which
       * must not keep anybody out. Bounded by the lease length. Stores that queue their waiting writers
       * themselves (etcd and ZooKeeper, through `acquireSharedQueued`) ignore it: there a single attempt
       * keeps nobody out.
       * @default the lease length
       */
      readonly waitingMs?: number;
    }
  | { readonly permits: number; readonly mode?: undefined; readonly waitingMs?: undefined };

/** The shape's name for events, metrics and messages: low cardinality (never the number of permits). */
export type LockShapeName = 'read' | 'write' | 'permits';

export function lockShapeName(shape: LockShape): LockShapeName {
  return shape.permits === undefined ? shape.mode : 'permits';
}
