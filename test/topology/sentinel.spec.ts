import type { Redis } from 'ioredis';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { describeLockStoreContract } from '../stores/lock-store.contract';
import { describeSharedLockStoreContract } from '../stores/shared-lock-store.contract';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { runIncrementWorkers } from './support/increment-workers';
import { lazySentinel, sentinelOption } from './support/topology-fixtures';

const startGroup = lazySentinel();

describeLockStoreContract('RedisLockStore behind Sentinel (redis: { sentinels, name })', async () => {
  const group = await startGroup();
  return {
    store: new RedisLockStore(createRedisConnection(sentinelOption(group)), { keyPrefix: testPrefix(__filename), commandTimeoutMs: 5_000 }),
  };
});

// Read/write locks and semaphores: one key each, so behind Sentinel exactly as on one server.
describeSharedLockStoreContract('RedisLockStore behind Sentinel', async () => {
  const group = await startGroup();
  return {
    store: new RedisLockStore(createRedisConnection(sentinelOption(group)), { keyPrefix: `${testPrefix(__filename)}shared:`, commandTimeoutMs: 5_000 }),
  };
});

describe('a Sentinel group behind the lock module', () => {
  const prefix = testPrefix(__filename);

  it('leaves no connection open on the sentinels after app.close(), failover detector included', async () => {
    const group = await startGroup();
    const ports = group.sentinels.map(({ port }) => port);
    // Each probe is itself one client of the sentinel it asks.
    const clients = (): Promise<number[]> =>
      Promise.all(ports.map((port) => askRedis(port, async (redis) => Number(/connected_clients:(\d+)/.exec(await redis.info('clients'))![1]))));
    // Connections of earlier tests may still be closing: the baseline is taken once the count is steady.
    let baseline = await clients();
    await waitFor('the sentinels’ client counts to settle', async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const now = await clients();
      const steady = now.every((count, i) => count === baseline[i]);
      baseline = now;
      return steady;
    });
    const app = await createLockApp({ redis: sentinelOption(group), keyPrefix: prefix });
    const held = await app.locks.acquire('sentinel-close', { waitMs: 0 });
    const contention = app.next('contention', (e) => e.key === 'sentinel-close');
    const waiting = app.locks.acquire('sentinel-close', { waitMs: 10_000 });
    await contention;
    await held.release();
    await (await waiting).release();
    // Command connection and subscriber each keep the failover detector's subscriptions on every sentinel.
    await waitFor('the failover detectors to subscribe', async () => (await clients()).every((count, i) => count > baseline[i]!));
    await app.close();
    await waitFor('the sentinels to see every connection of the app closed', async () =>
      (await clients()).every((count, i) => count <= baseline[i]!),
    );
  });

  it('loses no increment when 3 processes do read-modify-write under one lock behind Sentinel', async () => {
    const group = await startGroup();
    const { expected, counted, exitCodes } = await runIncrementWorkers(__filename, sentinelOption(group));
    expect(exitCodes).toEqual([0, 0, 0]);
    expect(counted).toBe(expected);
  });

  it('reconnects a connection that ioredis ended for good when its failover detector fired during a reconnect', async () => {
    const group = await startGroup();
    const app = await createLockApp({ redis: sentinelOption(group), keyPrefix: prefix, commandTimeoutMs: 1_000 });
    try {
      await (await app.locks.acquire('revived', { waitMs: 0 })).release();
      // What the failover detector does on +switch-master (connector.disconnect()), at the moment ioredis is
      // already reconnecting: the attempt is aborted and the client ends ("Connection is closed.").
      const client = (app.store as unknown as { connection: { client: Redis } }).connection.client;
      const connector = (client as unknown as { connector: { disconnect(): void } }).connector;
      const ended = new Promise((resolve) => client.once('end', resolve));
      client.once('connecting', () => connector.disconnect());
      const id = await client.call('CLIENT', 'ID');
      await askRedis(await group.primaryPort(), (redis) => redis.call('CLIENT', 'KILL', 'ID', String(id)));
      await ended;
      const lease = await app.locks.acquire('revived', { waitMs: 5_000 });
      await lease.release();
    } finally {
      await app.close();
    }
  });

});
