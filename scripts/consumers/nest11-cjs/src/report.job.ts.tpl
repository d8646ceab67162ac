import { Injectable } from '@nestjs/common';
import { Lease, LockService } from 'nestjs-distributed-lock';

/** An app provider that must run on one instance at a time: the way a real app would use LockService. */
@Injectable()
export class ReportJob {
  constructor(private readonly locks: LockService) {}

  /** Runs `work` while this instance holds the cluster-wide 'k' lock. */
  run<T>(work: (lease: Lease) => Promise<T>): Promise<T> {
    return this.locks.withLock('k', work);
  }

  /** What another instance gets from a single attempt: null while 'k' is held elsewhere. */
  tryStart(): Promise<Lease | null> {
    return this.locks.tryAcquire('k');
  }
}
