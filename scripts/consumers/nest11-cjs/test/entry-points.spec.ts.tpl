import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { Test, type TestingModule } from '@nestjs/testing';
import { DistributedLockModule, LockNotAcquiredError, LockStoreUnavailableError } from 'nestjs-distributed-lock';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';
import { LockTestingModule, LockTestKit } from 'nestjs-distributed-lock/testing';
import { ReportJob } from '../src/report.job';

describe('nestjs-distributed-lock/testing in a Nest 11 CommonJS app', () => {
  let moduleRef: TestingModule;
  let kit: LockTestKit;
  let job: ReportJob;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [LockTestingModule.forRoot({ keyPrefix: 'consumer11-testing:' })],
      providers: [ReportJob],
    }).compile();
    await moduleRef.init();
    kit = moduleRef.get(LockTestKit);
    job = moduleRef.get(ReportJob);
  });
  afterAll(() => moduleRef?.close());

  it('resolves the testing entry point to its CommonJS build', () => {
    expect(require.resolve('nestjs-distributed-lock/testing')).toMatch(/[\\/]dist[\\/]cjs[\\/]testing[\\/]index\.js$/);
  });

  it('plays another instance holding the key, and a store outage', async () => {
    const other = await kit.holdFromAnotherInstance('k');
    expect(await job.tryStart()).toBeNull();
    await other.release();
    const outage = kit.failAcquires();
    await expect(job.tryStart()).rejects.toThrow(LockStoreUnavailableError);
    outage.restore();
    const lease = await job.tryStart();
    expect(lease).not.toBeNull();
    await lease!.release();
    expect(LockNotAcquiredError).toBeDefined();
  });
});

@Module({ imports: [TerminusModule], providers: [LockHealthIndicator], exports: [LockHealthIndicator] })
class HealthModule {}

describe('nestjs-distributed-lock/health in a Nest 11 CommonJS app', () => {
  it('reports the Redis store up through terminus', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL, keyPrefix: 'consumer11-health:', isGlobal: true }), HealthModule],
    }).compile();
    await moduleRef.init();
    try {
      const result = await moduleRef.get(LockHealthIndicator).isHealthy('lock');
      expect(result.lock).toMatchObject({ status: 'up', storeReachable: true });
    } finally {
      await moduleRef.close();
    }
  });
});

describe('the openTelemetry option in a Nest 11 CommonJS app', () => {
  it('records lock metrics through @opentelemetry/api into the SDK', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL, keyPrefix: 'consumer11-otel:', openTelemetry: { meterProvider } })],
      providers: [ReportJob],
    }).compile();
    await moduleRef.init();
    try {
      await moduleRef.get(ReportJob).run(async () => undefined);
      await reader.forceFlush();
      const acquisitions = exporter
        .getMetrics()
        .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
        .filter((metric) => metric.descriptor.name === 'distributed_lock.acquire.duration');
      expect(acquisitions.flatMap((metric) => metric.dataPoints.map((point) => point.attributes))).toContainEqual({
        'distributed_lock.store': 'redis',
        'distributed_lock.acquire.outcome': 'granted',
      });
    } finally {
      await moduleRef.close();
      await meterProvider.shutdown();
    }
  });
});
