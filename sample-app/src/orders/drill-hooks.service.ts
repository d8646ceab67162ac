import { Injectable } from '@nestjs/common';
import type { Lease } from 'nestjs-distributed-lock';

/**
 * Fault injection for `npm run demo`, enabled only with DEMO_DRILLS=1: lets a request stall while it holds
 * its lease, and tells the demo (over the IPC channel it was started with) that it now holds one, so the
 * demo can pause this process with SIGSTOP at exactly that moment.
 */
@Injectable()
export class DrillHooks {
  readonly enabled = process.env.DEMO_DRILLS === '1';

  async stallWhileHolding(orderId: string, lease: Lease, stallMs: number): Promise<void> {
    if (!this.enabled || stallMs <= 0) return;
    process.send?.({ type: 'holding', orderId, fencingToken: lease.fencingToken, pid: process.pid });
    await new Promise((resolve) => setTimeout(resolve, stallMs));
  }
}
