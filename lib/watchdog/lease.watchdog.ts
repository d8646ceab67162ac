import { Injectable, Logger } from '@nestjs/common';
import { InjectLockStore, type LockStore, type RenewOutcome } from '../stores/lock-store.interface.js';
import { clockDriftMs } from './clock-drift.js';
import type { WatchedLease } from './watched-lease.interface.js';

interface Schedule {
  /** When the next renewal should be sent. */
  dueAt: number;
  /** Local view of expiry: sent time of the last successful grant or renewal + lease, minus clock drift. */
  deadline: number;
  inFlight: boolean;
}

/** What {@link LeaseWatchdog.status} reports. */
export interface WatchdogStatus {
  /** Leases being renewed or watched for their deadline. */
  readonly watched: number;
  /** Leases whose renewal is late by more than one renew interval. */
  readonly overdue: number;
  /** The latest of those, in ms (0 when none). */
  readonly worstLagMs: number;
}

/**
 * Renews every held lease of one application from a single timer. Each tick renews everything due within
 * half an interval, so leases drift into one shared phase and the steady state is one batched store call
 * per renew interval, however many leases are held.
 */
@Injectable()
export class LeaseWatchdog {
  private readonly logger = new Logger('DistributedLock');
  private readonly leases = new Map<WatchedLease, Schedule>();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private stopped = false;

  constructor(@InjectLockStore() private readonly store: LockStore) {}

  /** Starts watching a lease granted (or extended) by a store call sent at `sentAt`. */
  watch(lease: WatchedLease, sentAt: number): void {
    if (this.stopped) return;
    const schedule = this.leases.get(lease) ?? { dueAt: 0, deadline: 0, inFlight: false };
    this.reset(lease, schedule, sentAt);
    this.leases.set(lease, schedule);
    this.wakeAt(Math.min(schedule.dueAt, schedule.deadline));
  }

  /** After this, nothing about the lease is ever reported again, even by a renewal already in flight. */
  unwatch(lease: WatchedLease): void {
    this.leases.delete(lease);
  }

  /**
   * Whether renewals keep up, for health checks: how many leases are watched, and how many are past the
   * time their renewal should have been answered (due plus one renew interval) without having been.
   */
  status(now = Date.now()): WatchdogStatus {
    let overdue = 0;
    let worstLagMs = 0;
    for (const [lease, schedule] of this.leases) {
      if (schedule.dueAt === Infinity) continue;
      const lagMs = now - (schedule.dueAt + lease.renewIntervalMs);
      if (lagMs > 0) {
        overdue++;
        worstLagMs = Math.max(worstLagMs, lagMs);
      }
    }
    return { watched: this.leases.size, overdue, worstLagMs };
  }

  stop(): void {
    this.stopped = true;
    this.leases.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private reset(lease: WatchedLease, schedule: Schedule, sentAt: number): void {
    schedule.dueAt = lease.autoRenew ? sentAt + lease.renewIntervalMs : Infinity;
    schedule.deadline = sentAt + lease.leaseMs - clockDriftMs(lease.leaseMs);
    schedule.inFlight = false;
  }

  private wakeAt(at: number): void {
    if (this.stopped || at >= this.timerAt || at === Infinity) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    const due: Array<[WatchedLease, Schedule]> = [];
    let next = Infinity;
    for (const [lease, schedule] of this.leases) {
      if (now >= schedule.deadline) {
        this.leases.delete(lease);
        lease.onLost('expired');
      } else if (!schedule.inFlight && schedule.dueAt - lease.renewIntervalMs / 2 <= now) {
        due.push([lease, schedule]);
        next = Math.min(next, schedule.deadline);
      } else {
        next = Math.min(next, schedule.deadline, schedule.inFlight ? Infinity : schedule.dueAt);
      }
    }
    if (due.length > 0) {
      this.renew(due).catch((error: unknown) => this.logger.error('Watchdog renewal round failed', error));
    }
    this.wakeAt(next);
  }

  private async renew(due: Array<[WatchedLease, Schedule]>): Promise<void> {
    const sentAt = Date.now();
    for (const [, schedule] of due) schedule.inFlight = true;
    let results: RenewOutcome[];
    try {
      results = await this.store.renew(due.map(([lease]) => ({ key: lease.key, token: lease.token, leaseMs: lease.leaseMs })));
    } catch (error) {
      results = due.map(() => error as Error);
    }
    let next = Infinity;
    due.forEach(([lease, schedule], i) => {
      if (this.leases.get(lease) !== schedule) return;
      const result = results[i];
      if (result === true) {
        this.reset(lease, schedule, sentAt);
        lease.onRenewed(sentAt);
      } else if (result === false) {
        this.leases.delete(lease);
        lease.onLost('rejected');
        return;
      } else {
        const failure = result;
        // Retry soon; the deadline check in tick() declares the lease lost if no retry gets through.
        schedule.inFlight = false;
        schedule.dueAt = Date.now() + Math.max(10, Math.min(lease.renewIntervalMs / 4, 500));
        lease.onRenewFailed(failure);
      }
      next = Math.min(next, schedule.dueAt, schedule.deadline);
    });
    this.wakeAt(next);
  }
}
