import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLockModule, LockService } from 'nestjs-distributed-lock';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { inMemoryMetrics } from '../observability/metric-snapshot';
import { healthApp } from '../support/health-app';
import { testPrefix } from '../support/test-prefix';

describe('ZooKeeper store: health indicator and metrics', () => {
  let ensemble: ZookeeperEnsemble;
  let app: INestApplication;
  const { meterProvider, collect } = inMemoryMetrics();

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    const lockModule = DistributedLockModule.forRoot({
      store: 'zookeeper',
      zookeeper: ensemble.connect,
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
    await ensemble?.stop();
    await meterProvider.shutdown();
  });

  it('reports up with the round trip and the leases the watchdog keeps, and records metrics under store = zookeeper', async () => {
    const lease = await app.get(LockService).acquire('held-during-check');
    try {
      const response = await request(app.getHttpServer()).get('/health').expect(200);
      expect(response.body.info.lock).toMatchObject({ status: 'up', storeReachable: true, leasesWatched: 1, renewalsOverdue: 0 });
      expect(response.body.info.lock.storeRoundTripMs).toBeGreaterThan(0);
    } finally {
      await lease.release();
    }
    const metrics = await collect();
    const store = { 'distributed_lock.store': 'zookeeper' };
    expect(metrics.count('distributed_lock.acquire.duration', { ...store, 'distributed_lock.acquire.outcome': 'granted' })).toBe(1);
    expect(metrics.points('distributed_lock.acquire.duration').every((point) => point.attributes['distributed_lock.store'] === 'zookeeper')).toBe(true);
  });

  it('reports down (HTTP 503) once ZooKeeper is stopped, without the server in the body', async () => {
    await ensemble.stop();
    const response = await request(app.getHttpServer()).get('/health').expect(503);
    expect(response.body.error.lock).toMatchObject({ status: 'down', storeReachable: false, message: 'lock store unreachable' });
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
  });
});
