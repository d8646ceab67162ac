import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLockModule, LockService } from 'nestjs-distributed-lock';
import { RedlockMasters } from './redlock-test-support';
import { inMemoryMetrics } from '../observability/metric-snapshot';
import { healthApp } from '../support/health-app';
import { testPrefix } from '../support/test-prefix';

describe('Redlock store: health indicator and metrics', () => {
  let masters: RedlockMasters;
  let app: INestApplication;
  const { meterProvider, collect } = inMemoryMetrics();

  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    const lockModule = DistributedLockModule.forRoot({
      store: 'redlock',
      redlock: { masters: masters.urls },
      keyPrefix: testPrefix(__filename),
      leaseMs: 4_000,
      commandTimeoutMs: 1_000,
      openTelemetry: { meterProvider },
      isGlobal: true,
    });
    app = await healthApp(lockModule);
  });
  afterAll(async () => {
    await app?.close();
    await masters?.stop();
    await meterProvider.shutdown();
  });

  it('reports up with the round trip and the leases the watchdog keeps, and records metrics under store = redlock', async () => {
    const lease = await app.get(LockService).acquire('held-during-check');
    try {
      const response = await request(app.getHttpServer()).get('/health').expect(200);
      expect(response.body.info.lock).toMatchObject({ status: 'up', storeReachable: true, leasesWatched: 1, renewalsOverdue: 0 });
      expect(response.body.info.lock.storeRoundTripMs).toBeGreaterThan(0);
    } finally {
      await lease.release();
    }
    const metrics = await collect();
    const store = { 'distributed_lock.store': 'redlock' };
    expect(metrics.count('distributed_lock.acquire.duration', { ...store, 'distributed_lock.acquire.outcome': 'granted' })).toBe(1);
    expect(metrics.points('distributed_lock.acquire.duration').every((point) => point.attributes['distributed_lock.store'] === 'redlock')).toBe(true);
  });

  it('stays up with one master of three down (a majority answers), and reports down (HTTP 503) once two are, without a server in the body', async () => {
    await masters.kill(0);
    const oneDown = await request(app.getHttpServer()).get('/health').expect(200);
    expect(oneDown.body.info.lock).toMatchObject({ status: 'up', storeReachable: true });
    await masters.kill(1);
    const response = await request(app.getHttpServer()).get('/health').expect(503);
    expect(response.body.error.lock).toMatchObject({ status: 'down', storeReachable: false, message: 'lock store unreachable' });
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
  });
});
