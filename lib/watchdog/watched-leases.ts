import type { WatchedLease } from './watched-lease.interface.js';

/** One lease's entry: its schedule (the watchdog's fields) plus the links of the list it is in. */
export type Watched<S> = S & { readonly lease: WatchedLease; prev: Watched<S> | undefined; next: Watched<S> | undefined; watched: boolean };

/**
 * The watchdog's leases: a map from lease to schedule that costs no hashing. Every lease is watched and
 * unwatched once per acquisition, so the entry lives on the lease itself (its `watchSlot`) and the
 * entries form a doubly linked list for the sweeps, which is all a Map was used for.
 */
export class WatchedLeases<S extends object> {
  private first?: Watched<S>;
  private last?: Watched<S>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(lease: WatchedLease): Watched<S> | undefined {
    const entry = lease.watchSlot as Watched<S> | undefined;
    return entry?.watched ? entry : undefined;
  }

  /**
   * Adds `entry` (made by the caller in one literal, its links undefined and `watched` true: one object
   * shape for all of them) for its lease, which is not in the list yet.
   */
  add(entry: Watched<S>): Watched<S> {
    const { lease } = entry;
    entry.prev = this.last;
    if (this.last) this.last.next = entry;
    else this.first = entry;
    this.last = entry;
    this.count++;
    lease.watchSlot = entry;
    return entry;
  }

  delete(lease: WatchedLease): void {
    const entry = this.get(lease);
    if (!entry) return;
    const { prev, next } = entry;
    if (prev) prev.next = next;
    else this.first = next;
    if (next) next.prev = prev;
    else this.last = prev;
    // `next` is kept: a walk standing on this entry (or about to step onto it) goes on from there.
    entry.prev = undefined;
    entry.watched = false;
    lease.watchSlot = undefined;
    this.count--;
  }

  clear(): void {
    for (let entry = this.first; entry; entry = entry.next) entry.watched = false;
    this.first = this.last = undefined;
    this.count = 0;
  }

  /**
   * Every entry, oldest first. Deleting any entry while iterating is safe (a loss reported during the
   * walk may release other leases): deleted entries keep their `next` and are skipped.
   */
  *[Symbol.iterator](): IterableIterator<Watched<S>> {
    let entry = this.first;
    while (entry) {
      if (entry.watched) yield entry;
      entry = entry.next;
    }
  }
}
