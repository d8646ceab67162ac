import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { LockService } from 'nestjs-distributed-lock';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { redisUrl, testPrefix } from '../../test/support/test-prefix';
import { AppModule } from '../src/app.module';

async function startApp(synchronize: boolean): Promise<INestApplication> {
  process.env.DB_SYNCHRONIZE = String(synchronize);
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('sample app: orders over HTTP on real Redis and PostgreSQL', () => {
  let postgres: PostgresServer;
  let app: INestApplication;
  let other: INestApplication;
  let db: DataSource;

  beforeAll(async () => {
    postgres = await startPostgresServer();
    process.env.DATABASE_URL = postgres.url;
    process.env.REDIS_URL = redisUrl();
    process.env.LOCK_KEY_PREFIX = testPrefix(__filename);
    app = await startApp(true);
    other = await startApp(false);
    db = app.get(DataSource);
  });
  afterAll(async () => {
    await app.close();
    await other.close();
    await postgres.stop();
  });

  const createOrder = (id: string, installments: number, expiresInSeconds = 3_600): Promise<unknown> =>
    db.query(`INSERT INTO orders (id, installments, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`, [
      id,
      installments,
      expiresInSeconds,
    ]);

  it('pays an installment and returns the receipt with its fencing token', async () => {
    await createOrder('o-1', 3);
    const paid = await request(app.getHttpServer()).post('/orders/o-1/pay').expect(200);
    expect(paid.body).toMatchObject({ orderId: 'o-1', status: 'open', installment: 1 });
    expect(paid.body.fencingToken).toBeGreaterThan(0);
    const order = await request(app.getHttpServer()).get('/orders/o-1').expect(200);
    expect(order.body).toMatchObject({ paidInstallments: 1, lastFencingToken: String(paid.body.fencingToken) });
  });

  it('pays every installment exactly once under concurrent requests to two instances', async () => {
    await createOrder('o-2', 1_000);
    const servers = [app.getHttpServer(), other.getHttpServer()];
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => request(servers[i % 2]).post('/orders/o-2/pay')),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    const installments = responses.map((r) => r.body.installment as number).sort((a, b) => a - b);
    expect(installments).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM payments WHERE order_id = 'o-2'`);
    expect(n).toBe(30);
  });

  it('answers 409 Conflict when the order stays locked longer than the 2 s wait', async () => {
    await createOrder('o-3', 3);
    const lease = await other.get(LockService).acquire('order:o-3');
    const response = await request(app.getHttpServer()).post('/orders/o-3/pay').expect(409);
    await lease.release();
    expect(response.body).toMatchObject({ statusCode: 409, code: 'LOCK_NOT_ACQUIRED' });
    expect((await request(app.getHttpServer()).get('/orders/o-3')).body.paidInstallments).toBe(0);
  });

  it("refuses a write older than the row's fencing token with 409 STALE_FENCING_TOKEN, writing nothing", async () => {
    await createOrder('o-stale', 3);
    // As if a newer holder had written the order: its token is far ahead of any grant this run issues.
    const newer = Number.MAX_SAFE_INTEGER - 1;
    await db.query(`UPDATE orders SET last_fencing_token = $1 WHERE id = 'o-stale'`, [newer]);
    const response = await request(app.getHttpServer()).post('/orders/o-stale/pay').expect(409);
    expect(response.body).toMatchObject({ statusCode: 409, code: 'STALE_FENCING_TOKEN' });
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM payments WHERE order_id = 'o-stale'`);
    expect(n).toBe(0);
    expect((await request(app.getHttpServer()).get('/orders/o-stale')).body.paidInstallments).toBe(0);
  });

  it('reports the lock store, the watchdog and the database on GET /health', async () => {
    const response = await request(app.getHttpServer()).get('/health').expect(200);
    expect(response.body).toMatchObject({
      status: 'ok',
      info: { lock: { status: 'up', storeReachable: true, renewalsOverdue: 0 }, database: { status: 'up' } },
    });
  });

  it('reserves stock in a manual `await using` lock scope, refusing to oversell', async () => {
    await db.query(`INSERT INTO stock_items (sku, available) VALUES ('sku-e2e', 5)`);
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(i % 2 ? app.getHttpServer() : other.getHttpServer()).post('/stock/sku-e2e/reserve').send({ quantity: 1 }),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(5);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(3);
    const [{ available }] = await db.query(`SELECT available FROM stock_items WHERE sku = 'sku-e2e'`);
    expect(available).toBe(0);
  });

  it('runs the scheduled expiry job on exactly one of the two instances per tick, closing expired orders', async () => {
    await createOrder('o-expired', 3, -60);
    const [{ since }] = await db.query(`SELECT coalesce(max(tick), 0)::bigint AS since FROM job_runs`);
    const ticksSince = async (): Promise<Array<{ tick: string; runs: number }>> =>
      db.query(`SELECT tick, count(*)::int AS runs FROM job_runs WHERE tick > $1 GROUP BY tick`, [since]);
    // Wait for three ticks of the real @Cron schedule running in both applications.
    while ((await ticksSince()).length < 3) await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await ticksSince()).every((tick) => tick.runs === 1)).toBe(true);
    expect((await request(app.getHttpServer()).get('/orders/o-expired')).body.status).toBe('expired');
  });
});
