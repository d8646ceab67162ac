import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { askRedis } from '../../scripts/servers/server-probes';
import { testPrefix } from '../support/test-prefix';
import { clusterOption, lazyCluster } from './support/topology-fixtures';

const startCluster = lazyCluster();

/**
 * A slot migration during a renew batch: the watchdog renews every lease of a node in one call, routed by
 * the batch's first key. When that key has moved to the importing node already (ASK), the whole batch runs
 * there, where a lease of the same slot whose key is still on the source reads as missing. "Missing" there
 * is not "not ours": a live, renewing holder must never be declared lost by a store-side accident (it was,
 * `rejected`, and its key stayed held by nobody until its TTL).
 */
describe('Redis Cluster: a renew batch during a slot migration', () => {
  const prefix = testPrefix(__filename);

  it('renews the leases whose keys are still on the source node', async () => {
    const cluster = await startCluster();
    const store = new RedisLockStore(createRedisConnection(clusterOption(cluster)), { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    // Both keys in one slot (the hash tag), so one node serves them and the watchdog batches them together.
    const moved = { key: '{migrating}a', token: randomUUID(), leaseMs: 30_000 };
    const stays = { key: '{migrating}b', token: randomUUID(), leaseMs: 30_000 };
    const slot = calculateSlot(`${prefix}${moved.key}`);
    let finish: (() => Promise<void>) | undefined;
    try {
      for (const lease of [moved, stays]) expect(await store.acquire(lease.key, lease.token, lease.leaseMs, 'test')).toMatchObject({ acquired: true });
      const { master: source } = await cluster.shardOf(slot);
      const target = (await cluster.topology()).find((node) => node.role === 'master' && !node.failing && node.id !== source.id)!;
      await askRedis(target.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id));
      await askRedis(source.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id));
      const migrate = (key: string) => askRedis(source.port, (redis) => redis.call('MIGRATE', '127.0.0.1', String(target.port), key, '0', '5000'));
      await migrate(`${prefix}${moved.key}`);
      finish = async () => {
        // Everything left in the slot (the other lock, the slot's fencing counter) goes too.
        const left = await askRedis(source.port, (redis) => redis.call('CLUSTER', 'GETKEYSINSLOT', String(slot), '100') as Promise<string[]>);
        for (const key of left) await migrate(key);
        for (const node of (await cluster.topology()).filter((n) => n.role === 'master' && !n.failing)) {
          await askRedis(node.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id));
        }
        await cluster.waitUntilHealthy();
      };

      // The batch is routed by its first key, which has moved: the call follows ASK to the importing node.
      expect(await store.renew([moved, stays])).toEqual([true, true]);
      expect(await store.inspect(stays.key)).toMatchObject({ ttlMs: expect.any(Number) });
    } finally {
      await finish?.();
      await store.close();
    }
  });

  /**
   * With `replicas`, every write goes as one pipeline (the script, then WAIT on the same connection), and
   * ioredis follows a pipeline's MOVED, ASK or TRYAGAIN only when every command in it got the same one:
   * WAIT, which names no key, always succeeds, so the redirect came back as the call's error. Acquisitions of a slot
   * that had moved failed until the client's next periodic slot refresh, and renewals during a migration
   * failed until the lease ran out (the torture run's cluster-replicas case, seed 1).
   */
  it('with replicas: 1, follows ASK and TRYAGAIN during the migration and MOVED after it', async () => {
    const cluster = await startCluster();
    // TRYAGAIN is followed up to `maxRedirections` times, `retryDelayOnTryAgain` apart: here for as long as
    // the command timeout, so the acquisition below waits for the migration's end whatever the box's load.
    const option = { ...clusterOption(cluster), maxRedirections: 100, retryDelayOnTryAgain: 50 };
    const store = new RedisLockStore(createRedisConnection(option), { keyPrefix: prefix, commandTimeoutMs: 5_000, replicas: 1 });
    const held = { key: '{acked}a', token: randomUUID(), leaseMs: 30_000 };
    const slot = calculateSlot(`${prefix}${held.key}`);
    try {
      expect(await store.acquire(held.key, held.token, held.leaseMs, 'test')).toMatchObject({ acquired: true });
      const { master: source } = await cluster.shardOf(slot);
      const target = (await cluster.topology()).find((node) => node.role === 'master' && !node.failing && node.id !== source.id)!;
      await askRedis(target.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id));
      await askRedis(source.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id));
      const migrate = (key: string) => askRedis(source.port, (redis) => redis.call('MIGRATE', '127.0.0.1', String(target.port), key, '0', '5000'));
      const left = () => askRedis(source.port, (redis) => redis.call('CLUSTER', 'GETKEYSINSLOT', String(slot), '100') as Promise<string[]>);
      // The whole slot goes (the lock and the slot's fencing counter): the source answers ASK for each.
      for (const key of await left()) await migrate(key);

      // The renewal: ASK, then the importing node, which has the key.
      expect(await store.renew([held])).toEqual([true]);
      // A new key: ASK (not on the source), then TRYAGAIN (its fencing counter is on the target, the key
      // nowhere), until the migration ends.
      const other = { key: '{acked}b', token: randomUUID() };
      const acquiring = store.acquire(other.key, other.token, 30_000, 'test');

      // The migration ends; the client's slot map still names the source, which now answers MOVED.
      for (const node of (await cluster.topology()).filter((n) => n.role === 'master' && !n.failing)) {
        await askRedis(node.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id));
      }
      expect(await acquiring).toMatchObject({ acquired: true, fencingToken: expect.anything() });
      await cluster.waitUntilHealthy();
      const third = { key: '{acked}c', token: randomUUID() };
      expect(await store.acquire(third.key, third.token, 30_000, 'test')).toMatchObject({ acquired: true });
      expect(await store.renew([held, { ...other, leaseMs: 30_000 }])).toEqual([true, true]);
      for (const lease of [held, other, third]) expect(await store.release(lease.key, lease.token, 0)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
