import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import type { Lease } from '../../lib/index';
import { exitOf, forkWorker } from '../support/child-process';
import { expectHandedOnInArrivalOrder } from './fair-queue.scenarios';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { clusterOption, lazyCluster } from '../topology/support/topology-fixtures';

const startCluster = lazyCluster();

describe.each([false, true])('fair: true on a Redis Cluster (shardedPubSub: %s)', (shardedPubSub) => {
  const prefix = testPrefix(__filename) + (shardedPubSub ? 'sharded:' : 'plain:');

  it('grants waiters of several applications in queue order, the key, its queue, counter and channels in one slot', async () => {
    const cluster = await startCluster();
    const observer = new Cluster(cluster.seeds.map(({ host, port }) => ({ host, port })));
    const queueKey = new RedisKeyLayout(prefix).queueKey(`${prefix}order:{42}:pay`);
    const apps: LockApp[] = await Promise.all(
      [0, 1, 2, 3].map((i) => createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix, fair: true, shardedPubSub, holder: `app-${i}` })),
    );
    try {
      // Queue order is arrival order: each waiter's entry lands before the next one starts.
      await expectHandedOnInArrivalOrder(apps, 'order:{42}:pay', async (length) => {
        while ((await observer.llen(queueKey)) < length) await new Promise((resolve) => setImmediate(resolve));
      });
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      observer.disconnect();
    }
  });

  it('grants semaphore waiters of several applications in queue order, their queue in the key’s slot, never more than N at once', async () => {
    const cluster = await startCluster();
    const observer = new Cluster(cluster.seeds.map(({ host, port }) => ({ host, port })));
    const queueKey = new RedisKeyLayout(prefix).queueKey(`${prefix}partner:{7}:quotes`, 'shaped');
    const apps: LockApp[] = await Promise.all(
      [0, 1, 2, 3].map((i) => createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix, fair: true, shardedPubSub, holder: `app-${i}` })),
    );
    try {
      const holders = [await apps[0]!.locks.acquire('partner:{7}:quotes', { permits: 2 }), await apps[0]!.locks.acquire('partner:{7}:quotes', { permits: 2 })];
      const order: number[] = [];
      const waiting: Array<Promise<Lease>> = [];
      for (let i = 1; i <= 3; i++) {
        waiting.push(apps[i]!.locks.acquire('partner:{7}:quotes', { permits: 2, waitMs: 30_000 }).then((lease) => (order.push(i), lease)));
        while ((await observer.llen(queueKey)) < i) await new Promise((resolve) => setImmediate(resolve));
      }
      let highest = Math.max(...holders.map((lease) => lease.fencingToken));
      for (let next = 1; next <= 3; next++) {
        await holders.shift()!.release();
        const lease = await waiting[next - 1]!;
        expect(lease.fencingToken).toBeGreaterThan(highest);
        highest = lease.fencingToken;
        expect(await apps[0]!.store.list('partner:{7}:quotes')).toHaveLength(2);
        holders.push(lease);
      }
      await Promise.all(holders.map((lease) => lease.release()));
      expect(order).toEqual([1, 2, 3]);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      observer.disconnect();
    }
  });

  it('loses no increment when 3 processes queue for one key on the Cluster', async () => {
    const cluster = await startCluster();
    const counterKey = `${prefix}value`;
    const workers = Array.from({ length: 3 }, () =>
      forkWorker(join(__dirname, '../lease/workers/increment.worker.ts'), [prefix, counterKey, '2', '15'], {
        LOCK_TEST_REDIS_OPTION: JSON.stringify(clusterOption(cluster)),
        LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ fair: true, shardedPubSub }),
      }),
    );
    expect(await Promise.all(workers.map(exitOf))).toEqual([0, 0, 0]);
    const redis = new Redis(redisUrl());
    try {
      expect(Number(await redis.get(counterKey))).toBe(3 * 2 * 15);
    } finally {
      redis.disconnect();
    }
  });
});
