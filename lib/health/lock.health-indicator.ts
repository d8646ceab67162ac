import { Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { LockService, type LockHealth } from '../service/lock.service.js';

/** Thresholds of {@link LockHealthIndicator.isHealthy}. */
export interface LockHealthCheckOptions {
  /**
   * Report down when one round trip to the lock store takes longer than this.
   * @default Infinity (reachable is enough)
   */
  readonly maxRoundTripMs?: number;
  /**
   * Leases allowed to be past their renew time (due plus one renew interval, unanswered) before the
   * indicator reports the watchdog as falling behind.
   * @default 0
   */
  readonly maxOverdueRenewals?: number;
  /**
   * Put the store's error (which server, why) into the result. Off by default: health endpoints are often
   * public, and the reason can name internal hosts and users; it is logged as a warning either way.
   * @default false
   */
  readonly exposeErrors?: boolean;
}

/** What the indicator reports under its key, up or down. (A type, not an interface: terminus wants a record.) */
export type LockHealthDetails = {
  readonly storeReachable: boolean;
  /** Rounded to 0.01 ms; absent when the store did not answer. */
  readonly storeRoundTripMs?: number;
  readonly leasesWatched?: number;
  readonly renewalsOverdue?: number;
  readonly worstRenewLagMs?: number;
  readonly shuttingDown?: boolean;
  /** Why it is down. */
  readonly message?: string;
};

/**
 * A `@nestjs/terminus` health indicator for the lock store and the watchdog. Down when the store does not
 * answer (the lock fails closed, so the instance cannot do locked work), when renewals fall behind (held
 * leases are at risk of expiring under running code), or while the application shuts down:
 *
 * ```ts
 * @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [LockHealthIndicator] })
 * // in the controller:
 * @Get() @HealthCheck()
 * check() { return this.health.check([() => this.lock.isHealthy('lock')]); }
 * ```
 */
@Injectable()
export class LockHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly locks: LockService,
  ) {}

  private readonly logger = new Logger('DistributedLock');

  /** @param key the name of this indicator in the health check's result. @default 'lock' */
  async isHealthy<const Key extends string = 'lock'>(
    key: Key = 'lock' as Key,
    options: LockHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    let health: LockHealth;
    try {
      health = await this.locks.checkHealth();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn(`Health check: lock store unreachable: ${reason}`);
      const message = options.exposeErrors ? `lock store unreachable: ${reason}` : 'lock store unreachable';
      return indicator.down({ storeReachable: false, message } satisfies LockHealthDetails);
    }
    const details: LockHealthDetails = {
      storeReachable: true,
      storeRoundTripMs: Math.round(health.storeRoundTripMs * 100) / 100,
      leasesWatched: health.watchdog.watched,
      renewalsOverdue: health.watchdog.overdue,
      worstRenewLagMs: health.watchdog.worstLagMs,
      shuttingDown: health.shuttingDown,
    };
    const problems = this.problems(health, options);
    return problems.length === 0 ? indicator.up(details) : indicator.down({ ...details, message: problems.join('; ') } satisfies LockHealthDetails);
  }

  private problems(health: LockHealth, options: LockHealthCheckOptions): string[] {
    const problems: string[] = [];
    const maxRoundTripMs = options.maxRoundTripMs ?? Infinity;
    if (health.storeRoundTripMs > maxRoundTripMs) {
      problems.push(`lock store round trip ${health.storeRoundTripMs.toFixed(1)} ms exceeds maxRoundTripMs ${maxRoundTripMs}`);
    }
    const { overdue, worstLagMs } = health.watchdog;
    if (overdue > (options.maxOverdueRenewals ?? 0)) {
      problems.push(`watchdog behind: ${overdue} lease(s) past their renew time, the latest by ${worstLagMs} ms`);
    }
    if (health.shuttingDown) problems.push('shutting down: no new leases are granted');
    return problems;
  }
}
