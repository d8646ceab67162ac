import { LeaseLostError, LockStoreUnavailableError, type Lease } from '../../lib/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { FencedResource } from '../support/fenced-resource';
import { createLockApp, type LockApp } from '../support/lock-app';
import { TcpProxy } from '../support/tcp-proxy';
import { testPrefix } from '../support/test-prefix';

/**
 * Drill "network isolation" from the seeds: the holder loses Redis but keeps its database connection.
 * Proves: its renewals fail, it is told its lease is lost, another instance takes the lock, and the old
 * holder's late write is refused by the fencing token at the database.
 */
describe('drill: the holder is cut off from Redis but not from the database', () => {
  const prefix = testPrefix(__filename);
  let redis: RedisServer;
  let postgres: PostgresServer;
  let proxy: TcpProxy;
  let isolated: LockApp;
  let healthy: LockApp;
  let resource: FencedResource;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
    proxy = await TcpProxy.start(redis.port);
    isolated = await createLockApp({ redis: proxy.url, keyPrefix: prefix, leaseMs: 800, commandTimeoutMs: 200 });
    healthy = await createLockApp({ redis: redis.url, keyPrefix: prefix, leaseMs: 800 });
    resource = await FencedResource.create(postgres.url);
  });
  afterAll(async () => {
    await isolated.close();
    await healthy.close();
    await proxy.close();
    await resource.close();
    await Promise.all([redis.stop(), postgres.stop()]);
  });

  it('loses the lease, lets another instance in, and has its late write refused by the fencing token', async () => {
    let entered!: (lease: Lease) => void;
    const holding = new Promise<Lease>((resolve) => (entered = resolve));
    const renewFailed = isolated.next('renew-failed', (e) => e.key === 'invoice:7');
    const lost = isolated.next('lost', (e) => e.key === 'invoice:7');
    const oldHolder = isolated.locks.withLock('invoice:7', async (lease) => {
      entered(lease);
      await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
      // A slow request that does not look at its signal writes anyway: the database must refuse it.
      return resource.write('invoice:7', 'written by the cut-off holder', lease.fencingToken);
    });
    const oldLease = await holding;
    proxy.cut();

    expect(await renewFailed).toMatchObject({ key: 'invoice:7' });
    expect(await lost).toMatchObject({ key: 'invoice:7', reason: 'expired' });
    const newLease = await healthy.locks.acquire('invoice:7', { waitMs: 10_000 });
    expect(newLease.fencingToken).toBeGreaterThan(oldLease.fencingToken);
    expect(await resource.write('invoice:7', 'written by the new holder', newLease.fencingToken)).toBe(true);

    const outcome = await oldHolder.catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LeaseLostError);
    expect(await resource.read('invoice:7')).toEqual({ value: 'written by the new holder', lastToken: newLease.fencingToken });
    await newLease.release();

    proxy.restore();
    // Until the client has reconnected, acquiring fails closed; then the instance locks normally again.
    let recovered: Lease | undefined;
    while (!recovered) {
      recovered = await isolated.locks.acquire('invoice:7', { waitMs: 10_000 }).catch((error: unknown) => {
        if (error instanceof LockStoreUnavailableError) return undefined;
        throw error;
      });
    }
    expect(recovered.fencingToken).toBeGreaterThan(newLease.fencingToken);
    await recovered.release();
  });
});
