import assert from 'node:assert/strict';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
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

/** The testing and health entry points, loaded from the ES module build as a Nest 12 app loads them. */
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
}
