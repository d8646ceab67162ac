import { Controller, Get, Param, Query } from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, LockService, LockStore, StaleFencingTokenError } from '../../lib/index';
import { freePort } from '../../scripts/servers/redis-server';
import { testPrefix } from '../support/test-prefix';
import { startLockedApp, type LockedApp } from '../decorator/locked-app';

const PREFIX = testPrefix(__filename);

@Controller('orders')
class OrdersController {
  constructor(private readonly locks: LockService) {}

  @Get('by-query')
  @DistributedLock('order:{id}', { waitMs: 0 })
  async byQuery(@Query('id') id?: string): Promise<object> {
    return { id };
  }

  @Get(':id/taken-over')
  @DistributedLock('order:{id}', { waitMs: 0, leaseMs: 300 })
  async takenOver(@Param('id') id: string): Promise<string> {
    const lease = this.locks.current()!;
    await this.store().forceRelease(`order:${id}`);
    await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
    return 'looks fine';
  }

  @Get(':id/frozen')
  @DistributedLock('order:{id}', { waitMs: 0, leaseMs: 300 })
  async frozen(@Param('id') id: string): Promise<string> {
    // A blocked event loop past the lease: no renewal can run, the lease is not kept.
    const until = Date.now() + 600;
    while (Date.now() < until);
    return id;
  }

  @Get(':id/stale')
  @DistributedLock('order:{id}', { waitMs: 0 })
  async stale(@Param('id') id: string): Promise<never> {
    throw new StaleFencingTokenError('orders', 1, 2, `order:${id}`);
  }

  private store(): LockStore {
    return (this.locks as unknown as { store: LockStore }).store;
  }
}

describe('HTTP status of lock errors, from the built-in filter', () => {
  let app: LockedApp;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await startLockedApp({ lock: { store: 'memory', keyPrefix: PREFIX }, controllers: [OrdersController] });
    http = request(app.app.getHttpServer());
  });
  afterAll(() => app?.close());

  it('answers 400 when a request value cannot name the resource (LockKeyError), without running the handler', async () => {
    const response = await http.get('/orders/by-query').expect(400);
    expect(response.body).toEqual({ statusCode: 400, error: 'Bad Request', code: 'LOCK_KEY_INVALID', message: expect.any(String) });
    expect(JSON.stringify(response.body)).not.toContain('order:');
  });

  it('answers 409 LEASE_LOST when another holder took the resource over while the request ran', async () => {
    const response = await http.get('/orders/7/taken-over').expect(409);
    expect(response.body).toMatchObject({ statusCode: 409, code: 'LEASE_LOST' });
  });

  it('answers 503 LEASE_LOST with Retry-After when the lease could not be kept (expired) while the request ran', async () => {
    const response = await http.get('/orders/11/frozen').expect(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.body).toMatchObject({ statusCode: 503, code: 'LEASE_LOST' });
  });

  it('answers 409 STALE_FENCING_TOKEN for a write the resource refused', async () => {
    const response = await http.get('/orders/8/stale').expect(409);
    expect(response.body).toMatchObject({ statusCode: 409, code: 'STALE_FENCING_TOKEN' });
  });
});

describe('HTTP status when the lock store is down', () => {
  it('answers 503 with Retry-After (LockStoreUnavailableError), without running the handler', async () => {
    const app = await startLockedApp({
      lock: { redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: PREFIX, waitMs: 0 },
      controllers: [OrdersController],
    });
    try {
      const response = await request(app.app.getHttpServer()).get('/orders/by-query?id=9').expect(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable', code: 'LOCK_STORE_UNAVAILABLE' });
      expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
    } finally {
      await app.close();
    }
  });
});
