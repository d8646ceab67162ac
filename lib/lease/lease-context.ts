import type { TransactionHold } from './lease-host.interface.js';
import type { Lease } from './lease.js';
import { ScopeStorage } from '../support/scope-storage.js';

/** One locked scope in the current async call chain. */
export interface LeaseFrame {
  readonly lease: Lease;
  /** The nearest scope that was still running when this one began. */
  readonly parent: LeaseFrame | undefined;
  /**
   * True while the scope's own code runs. The frames a transaction keeps for later calls to join (see
   * `TransactionOwnedLeases`) are never in a call chain and stay open; their lease says whether it is held.
   */
  open: boolean;
  /** Settles when the last re-entrant scope joined onto this frame has finished. */
  joined: Promise<unknown>;
}

/**
 * The leases held by the current async call chain, innermost first. Each LockService has its own, so two
 * applications in one process never see each other's leases.
 *
 * A frame stays the async context of work its scope started without awaiting it (timers, listeners,
 * `void this.audit()`), long after the scope ended. Such work must neither see the ended scope's lease as
 * its own nor keep it reachable: every lookup skips frames whose scope has ended, and a new frame's parent
 * is the nearest one still running, so a method that reschedules itself never builds a chain.
 */
export class LeaseContext {
  private readonly storage = new ScopeStorage<LeaseFrame>();

  /** `transactions`: where a joined scope hands the lease to the transaction it ran in, if any. */
  constructor(private readonly transactions: TransactionHold) {}

  /**
   * Opens a scope of `lease` in this call chain: the lease counts it as work under it until `close`. The
   * caller runs the scope's code with `runIn` and closes it once that has settled (LockService does it in
   * its own async step: a `run(lease, fn)` here would cost every locked call one more).
   */
  open(lease: Lease): LeaseFrame {
    const frame = this.frame(lease);
    lease.enterScope();
    this.storage.enter();
    return frame;
  }

  /** Runs `fn` as the code of the open scope `frame` (see {@link open}). */
  runIn<T>(frame: LeaseFrame, fn: (lease: Lease) => Promise<T> | T): Promise<T> | T {
    return this.storage.run(frame, fn, frame.lease);
  }

  /** The scope `frame` has ended: its lease no longer counts it, and lookups skip it. */
  close(frame: LeaseFrame): void {
    frame.open = false;
    frame.lease.exitScope();
    this.storage.leave();
  }

  /** The application has shut down: the storage is given back once no scope runs (see `ScopeStorage`). */
  dispose(): void {
    this.storage.dispose();
  }

  /** The lease of the innermost running scope of this call chain, held or lost. */
  current(): Lease | undefined {
    return openFrom(this.storage.getStore())?.lease;
  }

  /** Leases of every running scope of this call chain, innermost first. */
  leases(): Lease[] {
    const found: Lease[] = [];
    for (let frame = openFrom(this.storage.getStore()); frame; frame = openFrom(frame.parent)) found.push(frame.lease);
    return found;
  }

  /** How many running scopes of this call chain run under `lease` (normally 0 or 1). */
  count(lease: Lease): number {
    let found = 0;
    for (let frame = openFrom(this.storage.getStore()); frame; frame = openFrom(frame.parent)) if (frame.lease === lease) found++;
    return found;
  }

  /** The innermost running scope of this call chain that locked `key` (its lease held or lost). */
  holding(key: string): LeaseFrame | undefined {
    for (let frame = openFrom(this.storage.getStore()); frame; frame = openFrom(frame.parent)) {
      if (frame.lease.key === key) return frame;
    }
    return undefined;
  }

  /**
   * Runs `fn` inside the lease `frame` holds, as work under that lease: the lease is not released while
   * `fn` runs, even if the scope that joined it ends first (a detached `void this.audit()`, a
   * `Promise.race` that stopped awaiting). The join is counted before this returns, so no release can
   * slip in between. Re-entrant scopes joined onto one frame run one after another: `Promise.all`
   * siblings that each lock the key their caller holds stay mutually excluded, and each gets a frame of its
   * own, so their own nested re-entries queue behind them, not behind each other. A scope that ran under a
   * lease that was lost ends with the lease's `LeaseLostError`; a transaction the joined work ran in holds
   * the lease until it completes, even if the scope that took the lease ends first.
   */
  async join<T>(frame: LeaseFrame, fn: () => Promise<T>): Promise<T> {
    const { lease } = frame;
    lease.enterScope();
    this.storage.enter();
    const previous = frame.joined;
    let finished!: () => void;
    frame.joined = new Promise<void>((resolve) => (finished = resolve));
    const child = this.frame(lease);
    try {
      await previous;
      lease.assertHeld();
      let value: T;
      try {
        value = await this.storage.run(child, fn);
      } catch (error) {
        throw lease.lostDuring(error);
      }
      lease.assertHeld();
      this.transactions.hold(lease);
      return value;
    } finally {
      child.open = false;
      finished();
      lease.exitScope();
      this.storage.leave();
    }
  }

  private frame(lease: Lease): LeaseFrame {
    return { lease, parent: openFrom(this.storage.getStore()), open: true, joined: Promise.resolve() };
  }
}

function openFrom(frame: LeaseFrame | undefined): LeaseFrame | undefined {
  while (frame && !frame.open) frame = frame.parent;
  return frame;
}
