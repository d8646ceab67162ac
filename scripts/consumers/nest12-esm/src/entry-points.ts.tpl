import assert from 'node:assert/strict';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { DistributedLockModule, LockStoreUnavailableError } from 'nestjs-distributed-lock';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';
import { LockTestingModule, LockTestKit } from 'nestjs-distributed-lock/testing';
import { ReportJob } from './report.job.js';

@Module({ imports: [LockTestingModule.forRoot({ keyPrefix: 'consumer12-testing:' })], providers: [ReportJob] })
class TestingAppModule {}

@Module({
  imports: [
    DistributedLockModule.forRoot({ redis: process.env.REDIS_URL, keyPrefix: 'consumer12-health:', isGlobal: true }),
    TerminusModule,
  ],
  providers: [LockHealthIndicator],
})
class HealthAppModule {}

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });

@Module({
  imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL, keyPrefix: 'consumer12-otel:', openTelemetry: { meterProvider } })],
  providers: [ReportJob],
})
class TelemetryAppModule {}

/**
 * The testing and health entry points, loaded from the ES module build as a Nest 12 app loads them, and the
 * openTelemetry option, whose @opentelemetry/api the ES module build loads with import().
 */
export async function checkEntryPoints(): Promise<void> {
  for (const entry of ['nestjs-distributed-lock/testing', 'nestjs-distributed-lock/health']) {
    const resolved = import.meta.resolve(entry);
    assert.match(resolved, /\/dist\/esm\/(testing|health)\/index\.js$/, `${entry} resolved to ${resolved}`);
  }

  const testing = await NestFactory.createApplicationContext(TestingAppModule, { logger: ['error', 'warn'] });
  try {
    const kit = testing.get(LockTestKit);
    const job = testing.get(ReportJob);
    const other = await kit.holdFromAnotherInstance('k');
    assert.equal(await job.tryStart(), null, 'a key held by another instance was granted');
    await other.release();
    const outage = kit.failAcquires();
    await assert.rejects(job.tryStart(), LockStoreUnavailableError);
    outage.restore();
    const lease = await job.tryStart();
    assert.ok(lease, 'the key stayed taken after the other instance released it');
    await lease.release();
  } finally {
    await testing.close();
  }

  const health = await NestFactory.createApplicationContext(HealthAppModule, { logger: ['error', 'warn'] });
  try {
    const result = await health.get(LockHealthIndicator).isHealthy('lock');
    assert.equal(result.lock.status, 'up', `health: ${JSON.stringify(result)}`);
  } finally {
    await health.close();
  }

  const telemetry = await NestFactory.createApplicationContext(TelemetryAppModule, { logger: ['error', 'warn'] });
  try {
    await telemetry.get(ReportJob).run(async () => undefined);
    await reader.forceFlush();
    const points = exporter
      .getMetrics()
      .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
      .filter((metric) => metric.descriptor.name === 'distributed_lock.acquire.duration')
      .flatMap((metric) => metric.dataPoints.map((point) => point.attributes));
    assert.deepEqual(points, [{ 'distributed_lock.store': 'redis', 'distributed_lock.acquire.outcome': 'granted' }], 'lock metrics');
  } finally {
    await telemetry.close();
    await meterProvider.shutdown();
  }
}
