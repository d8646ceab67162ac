import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lease } from './lease.js';

/** One locked scope in the current async call chain. */
export interface LeaseFrame {
  readonly lease: Lease;
  readonly parent: LeaseFrame | undefined;
  /** Settles when the last re-entrant scope joined onto this frame has finished. */
  joined: Promise<unknown>;
}

/**
 * The leases held by the current async call chain, innermost first. Each LockService has its own, so two
 * applications in one process never see each other's leases.
 */
export class LeaseContext {
  private readonly storage = new AsyncLocalStorage<LeaseFrame>();

  run<T>(lease: Lease, fn: () => T): T {
    return this.storage.run(this.frame(lease), fn);
  }

  current(): Lease | undefined {
    return this.storage.getStore()?.lease;
  }

  /** The innermost frame of this call chain that holds `key`, if any. */
  holding(key: string): LeaseFrame | undefined {
    for (let frame = this.storage.getStore(); frame; frame = frame.parent) {
      if (frame.lease.key === key) return frame;
    }
    return undefined;
  }

  /**
   * Runs `fn` inside the lease `frame` already holds. Re-entrant scopes joined onto one frame run one after
   * another: `Promise.all` siblings that each lock the key their caller holds stay mutually excluded, and
   * each gets a frame of its own, so their own nested re-entries queue behind them, not behind each other.
   */
  async join<T>(frame: LeaseFrame, fn: () => Promise<T>): Promise<T> {
    const previous = frame.joined;
    let finished!: () => void;
    frame.joined = new Promise<void>((resolve) => (finished = resolve));
    try {
      await previous;
      return await this.storage.run(this.frame(frame.lease), fn);
    } finally {
      finished();
    }
  }

  private frame(lease: Lease): LeaseFrame {
    return { lease, parent: this.storage.getStore(), joined: Promise.resolve() };
  }
}
