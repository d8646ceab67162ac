import { LeaseLostError } from '../../lib/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { FencedResource } from '../support/fenced-resource';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

/**
 * Drill "Redis failover / restart" from the seeds: a Redis without persistence restarts while a lease is
 * held, so the lock and the fencing counters are gone. Proves: the holder is told its lease is lost at
 * its next renewal, new grants still carry larger fencing tokens (they fall back to the server clock),
 * and the old holder's write is refused at the database. This is the documented boundary: between the
 * restart and that renewal two holders can coexist, and only the fencing token keeps the data right.
 */
describe('drill: Redis restarts and forgets every lock while one is held', () => {
  const prefix = testPrefix(__filename);
  let redis: RedisServer;
  let postgres: PostgresServer;
  let holderApp: LockApp;
  let otherApp: LockApp;
  let resource: FencedResource;

  beforeAll(async () => {
    [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
    holderApp = await createLockApp({ redis: redis.url, keyPrefix: prefix, leaseMs: 1_000 });
    otherApp = await createLockApp({ redis: redis.url, keyPrefix: prefix, leaseMs: 1_000 });
    resource = await FencedResource.create(postgres.url);
  });
  afterAll(async () => {
    await holderApp.close();
    await otherApp.close();
    await resource.close();
    await Promise.all([redis.stop(), postgres.stop()]);
  });

  it('tells the holder its lease is gone, keeps tokens increasing, and fencing refuses the old holder', async () => {
    const lease = await holderApp.locks.acquire('ledger');
    const lost = holderApp.next('lost', (e) => e.key === 'ledger');
    const { port } = redis;
    await redis.stop();
    redis = await startRedisServer({ port });

    // Once both applications have reconnected, the empty server grants the key right away.
    const takeover = await otherApp.locks.acquire('ledger', { waitMs: 10_000 });
    expect(takeover.fencingToken).toBeGreaterThan(lease.fencingToken);
    expect(await resource.write('ledger', 'new holder', takeover.fencingToken)).toBe(true);

    expect(await lost).toMatchObject({ key: 'ledger' });
    expect(lease.signal.aborted).toBe(true);
    expect(await resource.write('ledger', 'old holder', lease.fencingToken)).toBe(false);
    expect((await resource.read('ledger'))!.value).toBe('new holder');
    await takeover.release();
    await expect(lease.release()).rejects.toBeInstanceOf(LeaseLostError);
  });
});
