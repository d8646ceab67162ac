import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';
import type { LeaseFrame } from './lease-context.js';
import type { Lease } from './lease.js';

let services = 0;

/**
 * The leases a LockService deferred to transactions, kept in those transactions (through the
 * synchronizer's `retain`) as frames that later locked calls on the same key join: the transaction that
 * holds a deferred lease owns its key, instead of deadlocking on it until `waitMs`.
 */
export class TransactionOwnedLeases {
  /** Names this service's leases among everything the transactions keep. */
  private readonly prefix = `nestjs-distributed-lock:${++services}:`;
  private readonly frames = new WeakMap<Lease, LeaseFrame>();

  constructor(private readonly transactions: TransactionSynchronizer) {}

  retain(lease: Lease): void {
    this.transactions.retain?.(this.prefix + lease.key, this.frameOf(lease));
  }

  /** The frame of the lease a transaction of the current context keeps for `key` (held, or lost). */
  frameFor(key: string): LeaseFrame | undefined {
    const frame = this.transactions.retained?.(this.prefix + key) as LeaseFrame | undefined;
    return frame && (frame.lease.held || frame.lease.lostError) ? frame : undefined;
  }

  private frameOf(lease: Lease): LeaseFrame {
    let frame = this.frames.get(lease);
    if (!frame) {
      frame = { lease, parent: undefined, open: true, joined: Promise.resolve() };
      this.frames.set(lease, frame);
    }
    return frame;
  }
}
