import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { LockEvents, onStaleFencingToken } from 'nestjs-distributed-lock';

/** Counters the demo reads from every instance through GET /stats. */
@Injectable()
export class InstanceStats implements OnModuleInit, OnModuleDestroy {
  readonly instance = process.env.INSTANCE_NAME ?? `pid-${process.pid}`;
  payRequests = 0;
  conflicts = 0;
  staleWritesRejected = 0;
  leasesLost = 0;
  cronRuns = 0;
  acquisitions = 0;
  readonly waitsMs: number[] = [];
  private stopCountingStaleWrites?: () => void;

  constructor(private readonly events: LockEvents) {}

  onModuleInit(): void {
    this.events.on('acquired', (e) => {
      this.acquisitions++;
      this.waitsMs.push(e.waitedMs);
    });
    this.events.on('lost', () => this.leasesLost++);
    // Refusals are published process-wide (the fencing helpers run on the app's database client, outside
    // any one application); the demo runs one application per process, so this counts exactly its own.
    this.stopCountingStaleWrites = onStaleFencingToken(() => this.staleWritesRejected++);
  }

  onModuleDestroy(): void {
    this.stopCountingStaleWrites?.();
  }

  snapshot(): Record<string, unknown> {
    return {
      instance: this.instance,
      payRequests: this.payRequests,
      conflicts: this.conflicts,
      staleWritesRejected: this.staleWritesRejected,
      leasesLost: this.leasesLost,
      cronRuns: this.cronRuns,
      acquisitions: this.acquisitions,
      waitsMs: this.waitsMs,
    };
  }
}
