import { Inject, Injectable } from '@nestjs/common';
import { DistributedLock, LockService, type Lease } from '../../lib/index';

/** A protected section, given the lease the locked method runs under. */
export type Section = (lease: Lease) => Promise<void>;

/** The decorated methods of the workload, made per process because their lease length is the case's. */
export interface LockedJobs {
  /** Waits up to 1 s; re-entrant, so a section may call it again on its own key and join. */
  run(key: string, section: Section): Promise<'ran'>;
  /** One attempt; `undefined` when the key is taken. */
  tick(key: string, section: Section): Promise<'ran' | undefined>;
  /** One attempt that keeps the key `minHoldMs` (400 ms) after the grant, as a cron job does. */
  cron(key: string, section: Section): Promise<'ran' | undefined>;
}

export const CRON_MIN_HOLD_MS = 400;

export function lockedJobsClass(leaseMs: number): new (...args: never[]) => LockedJobs {
  // The key function uses the first argument as it is, so that these methods contend with the
  // LockService calls of the same keys.
  const byKey = (key: string): string => key;

  @Injectable()
  class TortureJobs implements LockedJobs {
    constructor(@Inject(LockService) private readonly locks: LockService) {}

    @DistributedLock({ key: byKey, waitMs: 1_000, leaseMs, reentrant: true })
    async run(key: string, section: Section): Promise<'ran'> {
      await section(this.locks.current()!);
      return 'ran';
    }

    @DistributedLock({ key: byKey, waitMs: 0, leaseMs, onLocked: 'skip' })
    async tick(key: string, section: Section): Promise<'ran' | undefined> {
      await section(this.locks.current()!);
      return 'ran';
    }

    @DistributedLock({ key: byKey, waitMs: 0, leaseMs, minHoldMs: CRON_MIN_HOLD_MS, onLocked: 'skip' })
    async cron(key: string, section: Section): Promise<'ran' | undefined> {
      await section(this.locks.current()!);
      return 'ran';
    }
  }
  return TortureJobs;
}
