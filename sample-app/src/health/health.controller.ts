import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator, type HealthCheckResult } from '@nestjs/terminus';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';

/** Readiness: 200 while the lock store and the database answer and the watchdog keeps up; 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly lock: LockHealthIndicator,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([() => this.lock.isHealthy('lock', { maxRoundTripMs: 250 }), () => this.db.pingCheck('database')]);
  }
}
