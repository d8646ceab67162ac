import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { LockStoreUnavailableError, RedisLockRunbook } from '../../lib/index';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import type { RedisCluster } from '../../scripts/servers/redis-cluster';
import { askRedis } from '../../scripts/servers/server-probes';
import { describeLockStoreContract } from '../stores/lock-store.contract';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { runIncrementWorkers } from './support/increment-workers';
import { clusterOption, lazyCluster } from './support/topology-fixtures';

const startCluster = lazyCluster();
const run = promisify(execFile);

/** Calls of `commands` on every master, from INFO commandstats. */
async function callsOnMasters(cluster: RedisCluster, commands: readonly string[]): Promise<number> {
  const masters = (await cluster.topology()).filter((node) => node.role === 'master' && !node.failing);
  const texts = await Promise.all(masters.map((node) => askRedis(node.port, (redis) => redis.info('commandstats'))));
  let total = 0;
  for (const text of texts) {
    for (const command of commands) total += Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  }
  return total;
}

/** A key whose hash slot (with `prefix`) `port` does not serve. */
async function keyServedElsewhere(cluster: RedisCluster, port: number, prefix: string): Promise<string> {
  const topology = await cluster.topology();
  const here = topology.find((node) => node.port === port)!;
  for (let i = 0; ; i++) {
    const slot = calculateSlot(`${prefix}elsewhere:${i}`);
    if (!here.slots.some(([a, b]) => a <= slot && slot <= b)) return `elsewhere:${i}`;
  }
}

describeLockStoreContract('RedisLockStore on a Redis Cluster (redis: { cluster: [seeds] })', async () => {
  const cluster = await startCluster();
  return {
    store: new RedisLockStore(createRedisConnection(clusterOption(cluster)), { keyPrefix: testPrefix(__filename), commandTimeoutMs: 5_000 }),
  };
});

describe('a Redis Cluster behind the lock module', () => {
  const prefix = testPrefix(__filename);

  it('loses no increment when 3 processes do read-modify-write under one lock on the Cluster', async () => {
    const cluster = await startCluster();
    const { expected, counted, exitCodes } = await runIncrementWorkers(__filename, clusterOption(cluster));
    expect(exitCodes).toEqual([0, 0, 0]);
    expect(counted).toBe(expected);
  });

  it('renews leases spread over hundreds of hash slots with one call per node, not one per slot', async () => {
    const cluster = await startCluster();
    const store = new RedisLockStore(createRedisConnection(clusterOption(cluster)), { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    try {
      const requests = Array.from({ length: 300 }, (_, i) => ({ key: `spread:${i}`, token: `token-${i}`, leaseMs: 10_000 }));
      for (const { key, token } of requests) await store.acquire(key, token, 10_000, 'test');
      expect(new Set(requests.map(({ key }) => calculateSlot(prefix + key))).size).toBeGreaterThan(250);
      // The first round also loads the script on every node (NOSCRIPT, then EVAL).
      expect(await store.renew(requests)).toEqual(requests.map(() => true));
      const before = await callsOnMasters(cluster, ['evalsha', 'eval']);
      expect(await store.renew(requests)).toEqual(requests.map(() => true));
      expect((await callsOnMasters(cluster, ['evalsha', 'eval'])) - before).toBe(3);
    } finally {
      await store.close();
    }
  });

  it('tells a user who points a URL at a Cluster node to use the Cluster form, instead of failing with a bare MOVED', async () => {
    const cluster = await startCluster();
    const port = cluster.seeds[0]!.port;
    const app = await createLockApp({ redis: `redis://127.0.0.1:${port}`, keyPrefix: prefix });
    try {
      const error = await app.locks.acquire(await keyServedElsewhere(cluster, port, prefix), { waitMs: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((error as Error).cause)).toMatch(/MOVED .*redis: \{ cluster: \[seed nodes\] \}/);
    } finally {
      await app.close();
    }
  });

  it('works with a Cluster client built with enableOfflineQueue: false, from its very first acquire', async () => {
    const cluster = await startCluster();
    const client = new Cluster(clusterOption(cluster).cluster, { enableOfflineQueue: false, lazyConnect: true });
    const app = await createLockApp({ redis: client, keyPrefix: prefix });
    try {
      const lease = await app.locks.acquire('offline-queue-off', { waitMs: 0 });
      await lease.release();
    } finally {
      await app.close();
      client.disconnect();
    }
  });

  it('still runs every script after the nodes forgot them (NOSCRIPT falls back to EVAL)', async () => {
    const cluster = await startCluster();
    const app = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix, leaseMs: 300 });
    try {
      const first = await app.locks.acquire('flushed', { waitMs: 0 });
      await Promise.all(cluster.seeds.map(({ port }) => askRedis(port, (redis) => redis.call('SCRIPT', 'FLUSH'))));
      await app.next('renewed', (e) => e.key === 'flushed');
      await first.release();
      const second = await app.locks.acquire('flushed', { waitMs: 0 });
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      await second.release();
      expect(app.recorded('lost')).toEqual([]);
    } finally {
      await app.close();
    }
  });

  describe('with replicas: 1', () => {
    it('grants once the replica acknowledged, and refuses (releasing it) a grant the replica did not acknowledge', async () => {
      const cluster = await startCluster();
      const app = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix, replicas: 1, commandTimeoutMs: 1_000 });
      const key = 'acknowledged';
      try {
        const lease = await app.locks.acquire(key, { waitMs: 0 });
        await lease.release();
        const { replicas } = await cluster.shardOf(calculateSlot(prefix + key));
        const replica = cluster.nodes.get(replicas[0]!.port)!;
        replica.pause();
        let refused: unknown;
        try {
          refused = await app.locks.acquire(key, { waitMs: 0 }).catch((error: unknown) => error);
        } finally {
          replica.resume();
        }
        expect(refused).toBeInstanceOf(LockStoreUnavailableError);
        expect(String((refused as Error).cause)).toMatch(/only 0 of 1 replica\(s\) acknowledged it .*; it was released/);
        expect(await app.store.inspect(key)).toBeNull();
        const again = await app.locks.acquire(key, { waitMs: 5_000 });
        await again.release();
      } finally {
        await app.close();
      }
    });
  });

  describe('with replicas: 1 and fair: true', () => {
    it('hands the key to the next waiter once the replica acknowledged it, and refuses (releasing it) a hand-off the replica did not acknowledge', async () => {
      const cluster = await startCluster();
      const options = { redis: clusterOption(cluster), keyPrefix: prefix, replicas: 1, fair: true, commandTimeoutMs: 1_000 };
      const [holderApp, waiterApp] = await Promise.all([createLockApp(options), createLockApp(options)]);
      const observer = new Cluster(clusterOption(cluster).cluster);
      const key = 'fair-acknowledged';
      const layout = new RedisKeyLayout(prefix);
      const queued = async (): Promise<void> => {
        while ((await observer.llen(layout.queueKey(layout.lockKey(key)))) < 1) await new Promise((resolve) => setImmediate(resolve));
      };
      try {
        let held = await holderApp.locks.acquire(key, { waitMs: 0 });
        const waiting = waiterApp.locks.acquire(key, { waitMs: 10_000 });
        await queued();
        await held.release();
        const handed = await waiting;
        expect(handed.fencingToken).toBeGreaterThan(held.fencingToken);
        await handed.release();

        held = await holderApp.locks.acquire(key, { waitMs: 0 });
        // A short wait: the replica stays paused for less than the cluster's node timeout (2 s).
        const refused = waiterApp.locks.acquire(key, { waitMs: 1_200 }).catch((error: unknown) => error);
        await queued();
        const { replicas } = await cluster.shardOf(calculateSlot(prefix + key));
        const replica = cluster.nodes.get(replicas[0]!.port)!;
        replica.pause();
        try {
          await held.release();
          await refused;
        } finally {
          replica.resume();
        }
        expect(await refused).toBeInstanceOf(LockStoreUnavailableError);
        expect(String(((await refused) as Error).cause)).toMatch(/granted the lock to a waiter in line, but only 0 of 1 replica\(s\) acknowledged it .*; it was released/);
        expect(await holderApp.store.inspect(key)).toBeNull();
      } finally {
        await Promise.all([holderApp.close(), waiterApp.close()]);
        observer.disconnect();
      }
    });
  });

  describe('with shardedPubSub', () => {
    it('wakes a racing waiter (queue: false) through SSUBSCRIBE on the node that owns the key, announced by SPUBLISH from the release script', async () => {
      const cluster = await startCluster();
      // The release channel is what waiters that race listen on; queued waiters hear of their grant on their
      // instance's grant channel (test/stores/redis-fair-cluster.spec.ts).
      const options = { redis: clusterOption(cluster), keyPrefix: prefix, shardedPubSub: true, queue: false };
      const holderApp = await createLockApp(options);
      const waiterApp = await createLockApp(options);
      const key = 'sharded';
      try {
        const held = await holderApp.locks.acquire(key, { waitMs: 0 });
        const contention = waiterApp.next('contention', (e) => e.key === key);
        const waiting = waiterApp.locks.acquire(key, { waitMs: 20_000 });
        await contention;
        const { master } = await cluster.shardOf(calculateSlot(prefix + key));
        const channel = new RedisKeyLayout(prefix).releaseChannel(prefix + key);
        const subscribers = async (): Promise<number> => {
          const reply = (await askRedis(master.port, (redis) => redis.call('PUBSUB', 'SHARDNUMSUB', channel))) as [string, number];
          return Number(reply[1]);
        };
        await waitUntil(async () => (await subscribers()) === 1);
        const published = await callsOnMasters(cluster, ['spublish', 'publish']);
        await held.release();
        const next = await waiting;
        expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
        expect(await callsOnMasters(cluster, ['spublish'])).toBeGreaterThan(0);
        expect((await callsOnMasters(cluster, ['spublish', 'publish'])) - published).toBe(1);
        await next.release();
      } finally {
        await holderApp.close();
        await waiterApp.close();
      }
    });
  });

  it('refuses to list the locks of one Cluster node through a single-node client, which would look complete', async () => {
    const cluster = await startCluster();
    const client = new Redis(`redis://127.0.0.1:${cluster.seeds[0]!.port}`);
    try {
      const error = await new RedisLockRunbook(client, prefix).list().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((error as Error).cause)).toContain('Redis Cluster node: listing it alone would miss');
    } finally {
      client.disconnect();
    }
  });

  describe('the runbook CLI, given one node’s URL', () => {
    const CLI = join(__dirname, '../../lib/runbook/cli.ts');
    const REGISTER = join(__dirname, '../support/register-ts.cjs');

    it('lists the locks of every master and inspects a key on another node, without MOVED', async () => {
      const cluster = await startCluster();
      const app = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix, holder: 'pod-c' });
      try {
        const leases = await Promise.all(Array.from({ length: 30 }, (_, i) => app.locks.acquire(`runbook:${i}`, { waitMs: 0 })));
        const port = cluster.seeds[0]!.port;
        const cli = (...args: string[]) => run(process.execPath, ['-r', REGISTER, CLI, ...args, `--redis=redis://127.0.0.1:${port}`, `--prefix=${prefix}`]);
        const listed = (await cli('list', 'runbook:*')).stdout.trim().split('\n');
        expect(listed).toHaveLength(30);
        const elsewhere = leases.find((lease) => lease.key === 'runbook:0')!;
        expect((await cli('inspect', elsewhere.key)).stdout).toContain(`fencing=${elsewhere.fencingToken}`);
        await Promise.all(leases.map((lease) => lease.release()));
      } finally {
        await app.close();
      }
    });
  });
});

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}
