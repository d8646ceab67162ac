import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLockModule, LockService, type LockModuleOptions } from 'nestjs-distributed-lock';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';
import { LockTestingModule, LockTestKit } from 'nestjs-distributed-lock/testing';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { healthApp } from '../support/health-app';
import { testPrefix } from '../support/test-prefix';

describe('LockHealthIndicator against a real redis-server', () => {
  let redis: RedisServer;
  let app: INestApplication;

  beforeAll(async () => {
    redis = await startRedisServer();
    const options: LockModuleOptions = { redis: redis.url, keyPrefix: testPrefix(__filename), commandTimeoutMs: 1_000 };
    app = await healthApp(DistributedLockModule.forRoot({ ...options, isGlobal: true }));
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('reports up with the round trip and the leases the watchdog keeps, while Redis answers', async () => {
    const lease = await app.get(LockService).acquire('held-during-check');
    try {
      const response = await request(app.getHttpServer()).get('/health').expect(200);
      expect(response.body.status).toBe('ok');
      expect(response.body.info.lock).toMatchObject({
        status: 'up',
        storeReachable: true,
        leasesWatched: 1,
        renewalsOverdue: 0,
        shuttingDown: false,
      });
      expect(response.body.info.lock.storeRoundTripMs).toBeGreaterThan(0);
    } finally {
      await lease.release();
    }
  });

  it('reports down when the round trip exceeds maxRoundTripMs', async () => {
    const result = await app.get(LockHealthIndicator).isHealthy('lock', { maxRoundTripMs: 0 });
    expect(result.lock).toMatchObject({ status: 'down', storeReachable: true, message: expect.stringContaining('exceeds maxRoundTripMs 0') });
  });

  it('reports down (HTTP 503) once Redis is stopped, without the server or the cause in the body', async () => {
    await redis.stop();
    const response = await request(app.getHttpServer()).get('/health').expect(503);
    expect(response.body.status).toBe('error');
    expect(response.body.error.lock).toMatchObject({ status: 'down', storeReachable: false, message: 'lock store unreachable' });
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
  });
});

describe('LockHealthIndicator: the watchdog keeping up', () => {
  it('reports down while a lease is past its renew time, naming how many and how late', async () => {
    const app = await healthApp(LockTestingModule.forRoot({ keyPrefix: testPrefix(__filename) }));
    try {
      const kit = app.get(LockTestKit);
      const indicator = app.get(LockHealthIndicator);
      // The renewal of this one key gets no answer (ping still does): the lease's renewal is overdue.
      const stalled = kit.store.fail({ operations: ['renew'], key: 'slow', effect: 'hang' });
      const lease = await app.get(LockService).acquire('slow', { leaseMs: 10_000 });
      let result = await indicator.isHealthy('lock');
      expect(result.lock).toMatchObject({ status: 'up', leasesWatched: 1 });
      while (stalled.failures === 0 || result.lock.status === 'up') {
        await new Promise((resolve) => setTimeout(resolve, 20));
        result = await indicator.isHealthy('lock');
      }
      expect(result.lock).toMatchObject({
        status: 'down',
        storeReachable: true,
        renewalsOverdue: 1,
        message: expect.stringMatching(/^watchdog behind: 1 lease\(s\) past their renew time, the latest by \d+ ms$/),
      });
      stalled.restore();
      await lease.release();
    } finally {
      await app.close();
    }
  });
});
