import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLockModule, LockService } from 'nestjs-distributed-lock';
import { inMemoryMetrics } from '../observability/metric-snapshot';
import { healthApp } from '../support/health-app';

/**
 * A health app on a store of `kind` with in-memory metrics, for a describe block, and the case every
 * store proves the same way: up with its round trip and the watched lease, and metrics under
 * `store = kind`. Returns the app for the store's own outage cases.
 */
export function storeObservabilitySuite(kind: string, keyPrefix: string, storeOptions: () => Record<string, unknown>): () => INestApplication {
  let app: INestApplication;
  const { meterProvider, collect } = inMemoryMetrics();

  beforeAll(async () => {
    const lockModule = DistributedLockModule.forRoot({
      ...storeOptions(),
      keyPrefix,
      leaseMs: 4_000,
      commandTimeoutMs: 1_000,
      openTelemetry: { meterProvider },
      isGlobal: true,
    } as Parameters<typeof DistributedLockModule.forRoot>[0]);
    app = await healthApp(lockModule);
  });
  afterAll(async () => {
    await app?.close();
    await meterProvider.shutdown();
  });

  it(`reports up with the round trip and the leases the watchdog keeps, and records metrics under store = ${kind}`, async () => {
    const lease = await app.get(LockService).acquire('held-during-check');
    try {
      const response = await request(app.getHttpServer()).get('/health').expect(200);
      expect(response.body.info.lock).toMatchObject({ status: 'up', storeReachable: true, leasesWatched: 1, renewalsOverdue: 0 });
      expect(response.body.info.lock.storeRoundTripMs).toBeGreaterThan(0);
    } finally {
      await lease.release();
    }
    const metrics = await collect();
    const store = { 'distributed_lock.store': kind };
    expect(metrics.count('distributed_lock.acquire.duration', { ...store, 'distributed_lock.acquire.outcome': 'granted' })).toBe(1);
    expect(metrics.points('distributed_lock.acquire.duration').every((point) => point.attributes['distributed_lock.store'] === kind)).toBe(true);
  });

  return () => app;
}
