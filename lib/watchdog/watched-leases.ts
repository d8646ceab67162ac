import { IntrusiveList, type ListNode } from '../support/intrusive-list.js';
import type { WatchedLease } from './watched-lease.interface.js';

/** One lease's entry: its schedule (the watchdog's fields) plus the links of the list it is in. */
export type Watched<S> = S & ListNode<Watched<S>> & { readonly lease: WatchedLease };

/**
 * The watchdog's leases: a map from lease to schedule that costs no hashing. Every lease is watched and
 * unwatched once per acquisition, so the entry lives on the lease itself (its `watchSlot`) and the entries
 * form an intrusive list for the sweeps, which is all a Map was used for. Deleting any entry while iterating
 * is safe (a loss reported during the walk may release other leases): deleted entries are skipped.
 */
export class WatchedLeases<S extends object> {
  private readonly list = new IntrusiveList<Watched<S>>();

  get size(): number {
    return this.list.size;
  }

  get(lease: WatchedLease): Watched<S> | undefined {
    const entry = lease.watchSlot as Watched<S> | undefined;
    return entry?.listed ? entry : undefined;
  }

  /**
   * Adds `entry` (made by the caller in one literal, its links undefined and `listed` false: one object
   * shape for all of them) for its lease, which is not in the list yet.
   */
  add(entry: Watched<S>): Watched<S> {
    this.list.push(entry);
    entry.lease.watchSlot = entry;
    return entry;
  }

  delete(lease: WatchedLease): void {
    const entry = this.get(lease);
    if (!entry) return;
    this.list.remove(entry);
    lease.watchSlot = undefined;
  }

  clear(): void {
    this.list.clear();
  }

  [Symbol.iterator](): IterableIterator<Watched<S>> {
    return this.list[Symbol.iterator]();
  }
}
