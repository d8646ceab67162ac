import { Injectable, Logger } from '@nestjs/common';
import { InjectLockStore, type LockStore, type RenewOutcome } from '../stores/lock-store.interface.js';
import type { WatchedLease } from './watched-lease.interface.js';
import { WatchedLeases, type Watched } from './watched-leases.js';

interface Schedule {
  /** When the next renewal should be sent. */
  dueAt: number;
  /** How much earlier than `dueAt` a tick may renew it, to share a batch with others: half its interval. */
  slack: number;
  /** The renewal sent for this lease and not answered yet. */
  inFlight?: Promise<void>;
  /** Held by `extend()`: no renewal is sent meanwhile. */
  held: boolean;
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
  private readonly leases = new WatchedLeases<Schedule>();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private stopped = false;

  constructor(@InjectLockStore() private readonly store: LockStore) {}

  /**
   * Starts (or, after `hold`, resumes) watching a lease granted or extended by a store call that was sent
   * at `sentAt` and started a TTL of `ttlMs` (the lease's current `leaseMs`, or less for a queue's
   * hand-off: then the first renewal comes within a third of it). After `stop()` nothing can be watched any
   * more: the lease is lost at once rather than handed out unwatched.
   */
  watch(lease: WatchedLease, sentAt: number, ttlMs: number = lease.leaseMs): void {
    if (this.stopped) {
      lease.onLost('shutdown');
      return;
    }
    const schedule =
      this.leases.get(lease) ??
      this.leases.add({ lease, prev: undefined, next: undefined, listed: false, dueAt: 0, slack: 0, held: false, inFlight: undefined });
    schedule.held = false;
    this.reset(lease, schedule, sentAt, ttlMs);
    this.wakeAt(Math.min(schedule.dueAt, schedule.lease.deadline));
  }

  /**
   * Holds a lease's renewals for `extend()`: resolves once no renewal of it is in flight, and sends none
   * until `watch` (extended) or `resume` (the extension failed). Its deadline is still watched.
   */
  async hold(lease: WatchedLease): Promise<void> {
    const schedule = this.leases.get(lease);
    if (!schedule) return;
    schedule.held = true;
    await schedule.inFlight;
  }

  /** Ends a `hold` without a new grant: renewals go on from where they were. */
  resume(lease: WatchedLease): void {
    const schedule = this.leases.get(lease);
    if (!schedule?.held) return;
    schedule.held = false;
    this.wakeAt(Math.min(schedule.dueAt, schedule.lease.deadline));
  }

  /**
   * After this, nothing about the lease is ever reported again, even by a renewal already in flight.
   * Returns that renewal's answer, if one is on its way (see `Lease.release`, which may wait for it).
   */
  unwatch(lease: WatchedLease): Promise<void> | undefined {
    const inFlight = this.leases.get(lease)?.inFlight;
    this.leases.delete(lease);
    return inFlight;
  }

  /**
   * Whether renewals keep up, for health checks: how many leases are watched, and how many are past the
   * time their renewal should have been answered (due plus one renew interval) without having been.
   */
  status(now = Date.now()): WatchdogStatus {
    let overdue = 0;
    let worstLagMs = 0;
    for (const schedule of this.leases) {
      if (schedule.dueAt === Infinity) continue;
      const lagMs = now - (schedule.dueAt + schedule.lease.renewIntervalMs);
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

  /** After a grant or renewal sent at `sentAt` that started a TTL of `ttlMs`. */
  private reset(lease: WatchedLease, schedule: Schedule, sentAt: number, ttlMs: number): void {
    const interval = ttlMs < lease.leaseMs ? Math.min(lease.renewIntervalMs, Math.max(1, Math.floor(ttlMs / 3))) : lease.renewIntervalMs;
    // A short first grant (a queue's hand-off) is brought up to the lease asked for even without autoRenew.
    schedule.dueAt = lease.autoRenew || ttlMs < lease.leaseMs ? sentAt + interval : Infinity;
    schedule.slack = interval / 2;
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
    const due: Array<Watched<Schedule>> = [];
    let next = Infinity;
    for (const schedule of this.leases) {
      const { lease } = schedule;
      if (now >= schedule.lease.deadline) {
        // onLost unwatches it, taking the renewal in flight: its give-back lets that land first.
        lease.onLost('expired');
        this.leases.delete(lease);
      } else if (!schedule.inFlight && !schedule.held && schedule.dueAt - schedule.slack <= now) {
        due.push(schedule);
        next = Math.min(next, schedule.lease.deadline);
      } else {
        next = Math.min(next, schedule.lease.deadline, schedule.inFlight || schedule.held ? Infinity : schedule.dueAt);
      }
    }
    if (due.length > 0) {
      this.renew(due).catch((error: unknown) => this.logger.error('Watchdog renewal round failed', error));
    }
    this.wakeAt(next);
  }

  private async renew(due: Array<Watched<Schedule>>): Promise<void> {
    const sentAt = Date.now();
    // Each result is applied with the length its own request asked for, whatever the lease says by then.
    const requests = due.map(({ lease }) => ({ key: lease.key, token: lease.token, leaseMs: lease.leaseMs }));
    let answered!: () => void;
    const inFlight = new Promise<void>((resolve) => (answered = resolve));
    for (const schedule of due) schedule.inFlight = inFlight;
    let results: RenewOutcome[];
    const started = performance.now();
    try {
      results = await this.store.renew(requests);
    } catch (error) {
      results = due.map(() => error as Error);
    }
    const latencyMs = performance.now() - started;
    let next = Infinity;
    due.forEach((schedule, i) => {
      const { lease } = schedule;
      if (schedule.inFlight === inFlight) schedule.inFlight = undefined;
      if (this.leases.get(lease) !== schedule) return;
      const result = results[i];
      if (result === true) {
        this.reset(lease, schedule, sentAt, requests[i]!.leaseMs);
        lease.onRenewed(sentAt, requests[i]!.leaseMs, latencyMs);
      } else if (result === false) {
        this.leases.delete(lease);
        lease.onLost('rejected', latencyMs);
        return;
      } else {
        // Unknown for this lease only: retry it soon; the deadline check in tick() declares it lost if no
        // retry gets through in time.
        schedule.dueAt = Date.now() + Math.max(10, Math.min(lease.renewIntervalMs / 4, 500));
        lease.onRenewFailed(result, latencyMs);
      }
      next = Math.min(next, schedule.held ? Infinity : schedule.dueAt, schedule.lease.deadline);
    });
    answered();
    this.wakeAt(next);
  }
}
