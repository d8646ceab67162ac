import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import type { DistributedLockModule } from 'nestjs-distributed-lock';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly lock: LockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.lock.isHealthy('lock')]);
  }
}

/** An app's health module, as the docs show it: terminus, the controller, and the indicator as a provider. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [LockHealthIndicator],
})
class HealthModule {}

/** An HTTP application with `lockModule` and GET /health, started (the specs' way to ask the indicator). */
export async function healthApp(lockModule: ReturnType<typeof DistributedLockModule.forRoot>): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [lockModule, HealthModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}
