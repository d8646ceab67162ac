import { createRedisConnection } from '../../lib/stores/redis/redis-client.factory';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { describeLockStoreContract } from '../stores/lock-store.contract';
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

describe('a Sentinel group behind the lock module', () => {
  const prefix = testPrefix(__filename);

  it('loses no increment when 3 processes do read-modify-write under one lock behind Sentinel', async () => {
    const group = await startGroup();
    const { expected, counted, exitCodes } = await runIncrementWorkers(__filename, sentinelOption(group));
    expect(exitCodes).toEqual([0, 0, 0]);
    expect(counted).toBe(expected);
  });

  it('leaves no connection open on the sentinels after app.close(), failover detector included', async () => {
    const group = await startGroup();
    const ports = group.sentinels.map(({ port }) => port);
    // Each probe is itself one client of the sentinel it asks.
    const clients = (): Promise<number[]> =>
      Promise.all(ports.map((port) => askRedis(port, async (redis) => Number(/connected_clients:(\d+)/.exec(await redis.info('clients'))![1]))));
    const baseline = await clients();
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
});
