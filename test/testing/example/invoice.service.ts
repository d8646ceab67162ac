// An application service as a user writes it; test/testing/example/invoice.service.spec.ts tests it with
// nothing but the package's public entry points.
import { Injectable } from '@nestjs/common';
import { DistributedLock, LockService } from 'nestjs-distributed-lock';

export interface InvoiceRun {
  readonly customerId: string;
  readonly fencingToken: number;
  readonly lines: number;
}

/** Bills a customer's open usage: must never run twice at once for one customer, across all pods. */
@Injectable()
export class InvoiceService {
  /** Where the test decides how long "the work" takes; a real service would talk to its database here. */
  work: (customerId: string, signal: AbortSignal) => Promise<number> = async () => 1;

  constructor(private readonly locks: LockService) {}

  @DistributedLock({ key: 'invoice:{customerId}', waitMs: 200, leaseMs: 5_000 })
  async bill(customerId: string): Promise<InvoiceRun> {
    const lease = this.locks.current()!;
    const lines = await this.work(customerId, lease.signal);
    return { customerId, fencingToken: lease.fencingToken, lines };
  }

  @DistributedLock({ key: 'invoice:nightly', waitMs: 0, onLocked: 'skip' })
  async nightly(): Promise<'ran'> {
    return 'ran';
  }
}
