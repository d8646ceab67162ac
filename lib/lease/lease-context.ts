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

  /** The innermost lease of this call chain that is still held. */
  current(): Lease | undefined {
    for (let frame = this.storage.getStore(); frame; frame = frame.parent) {
      if (frame.lease.held) return frame.lease;
    }
    return undefined;
  }

  /**
   * The innermost frame of this call chain that still holds `key`. Frames outlive their scope in work the
   * scope started without awaiting it (timers, listeners, `void this.audit()`): such late calls must not
   * join a lease that was released meanwhile.
   */
  holding(key: string): LeaseFrame | undefined {
    for (let frame = this.storage.getStore(); frame; frame = frame.parent) {
      if (frame.lease.key === key && frame.lease.held) return frame;
    }
    return undefined;
  }

  /**
   * Runs `fn` inside the lease `frame` already holds. Re-entrant scopes joined onto one frame run one after
   * another: `Promise.all` siblings that each lock the key their caller holds stay mutually excluded, and
   * each gets a frame of its own, so their own nested re-entries queue behind them, not behind each other.
   * If the lease was released meanwhile, `whenReleased` takes the lock anew; if it was lost, the call fails.
   */
  async join<T>(frame: LeaseFrame, fn: () => Promise<T>, whenReleased: () => Promise<T>): Promise<T> {
    const previous = frame.joined;
    let finished!: () => void;
    frame.joined = new Promise<void>((resolve) => (finished = resolve));
    try {
      await previous;
      // The caller's scope may have ended while this call queued behind its siblings.
      if (!frame.lease.held) {
        if (frame.lease.lostError) throw frame.lease.lostError;
        return await whenReleased();
      }
      return await this.storage.run(this.frame(frame.lease), fn);
    } finally {
      finished();
    }
  }

  private frame(lease: Lease): LeaseFrame {
    return { lease, parent: this.storage.getStore(), joined: Promise.resolve() };
  }
}
