import calculateSlot from 'cluster-key-slot';
import { LockStoreUnavailableError, type Lease } from '../../lib/index';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { startRedisCluster, type ClusterNodeInfo, type RedisCluster } from '../../scripts/servers/redis-cluster';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { DrillTimeline } from '../topology/support/drill-timeline';
import { clusterOption } from '../topology/support/topology-fixtures';

// A failover on a loaded 2-core box can take far longer than alone: every step waits on a condition, never
// on a guessed sleep, so a generous bound only matters when something is really stuck.
jest.setTimeout(180_000);

const LEASES = 600;

function serves(node: ClusterNodeInfo, slot: number): boolean {
  return node.slots.some(([from, to]) => from <= slot && slot <= to);
}

/**
 * Drills "a Redis Cluster master dies" from the seeds, on a real 3-master, 3-replica cluster.
 *
 * SIGKILL of a master while 600 leases spread over every shard are held and renewed: proves a failure on
 * one shard costs only that shard (no lease on a healthy master is lost, nor even fails a renewal), that
 * the dead shard's leases survive on the replica that takes over (they were replicated), and that a waiter
 * on a key of the dead shard rides through the outage and gets the key after its holder.
 *
 * The node carrying the waiters' subscription killed: proves the subscription moves to another node and a
 * release still wakes the waiter.
 */
describe('drill: a Redis Cluster node dies while locks are held', () => {
  const prefix = testPrefix(__filename);
  let cluster: RedisCluster;
  const apps: LockApp[] = [];
  const open = async (name: string, leaseMs: number): Promise<LockApp> => {
    const app = await createLockApp({
      redis: { ...clusterOption(cluster), redisOptions: { connectionName: name } },
      keyPrefix: prefix,
      leaseMs,
      commandTimeoutMs: 1_000,
    });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await cluster.stop();
  });

  it('SIGKILL of a master: only its shard’s renewals fail, no lease is lost, and a waiter on that shard rides through', async () => {
    const timeline = new DrillTimeline('cluster-master-killed');
    const holderApp = await open('holder', 6_000);
    const waiterApp = await open('waiter', 6_000);
    timeline.watch(holderApp, 'holder');
    timeline.watch(waiterApp, 'waiter');
    const leases: Lease[] = [];
    for (let i = 0; i < LEASES; i += 50) {
      leases.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => holderApp.locks.acquire(`lease:${i + j}`, { waitMs: 0 })))));
    }
    const topology = await cluster.topology();
    const victim = topology.find((node) => node.role === 'master' && topology.some((r) => r.masterId === node.id))!;
    const onVictim = (key: string): boolean => serves(victim, calculateSlot(prefix + key));
    const doomed = leases.filter((lease) => onVictim(lease.key));
    expect(doomed.length).toBeGreaterThan(100);
    const shared = doomed[0]!;
    const contention = waiterApp.next('contention', (e) => e.key === shared.key);
    const waiting = waiterApp.locks.acquire(shared.key, { waitMs: 40_000 });
    await contention;
    await holderApp.next('renewed');

    timeline.mark('sigkill-master', { port: victim.port, slots: victim.slots });
    await cluster.kill(victim.port);
    for (;;) {
      const probe = await waiterApp.locks.tryAcquire(doomed[1]!.key).catch((error: unknown) => error);
      if (probe instanceof LockStoreUnavailableError) {
        timeline.mark('probe-failed', String(probe.cause), 'probe');
        break;
      }
      if (probe !== null) throw new Error(`a held key was granted: ${String(probe)}`);
    }
    await cluster.waitUntilHealthy();
    timeline.mark('replica-promoted', { port: (await cluster.shardOf(calculateSlot(prefix + shared.key))).master.port });
    // Every lease of the dead shard renewed again, on the promoted replica.
    await waitFor('every lease of the dead shard to renew on the promoted replica', async () => {
      const promotedAt = timeline.when((e) => e.event === 'replica-promoted')!;
      const renewed = new Set(timeline.all().filter((e) => e.event === 'renewed' && e.at > promotedAt).map((e) => e.key));
      return doomed.every((lease) => renewed.has(lease.key));
    });
    await shared.release();
    const next = await waiting;
    const file = timeline.save();

    const failedKeys = new Set(timeline.all().filter((e) => e.event === 'renew-failed').map((e) => e.key!));
    expect({ file, failedOnHealthyShards: [...failedKeys].filter((key) => !onVictim(key)) }).toEqual({ file, failedOnHealthyShards: [] });
    expect(timeline.all().filter((e) => e.event === 'lost')).toEqual([]);
    expect(leases.filter((lease) => lease !== shared).every((lease) => lease.held)).toBe(true);
    expect(next.fencingToken).toBeGreaterThan(shared.fencingToken);
    expect(timeline.overlaps()).toEqual([]);
    await next.release();
    await Promise.all(leases.map((lease) => lease.release()));
  });

  it('the node carrying the waiters’ subscription dies: the subscription moves and a release still wakes the waiter', async () => {
    const timeline = new DrillTimeline('cluster-subscriber-node-killed');
    const holderApp = await open('holder-2', 6_000);
    const waiterApp = await open('subscriber', 6_000);
    timeline.watch(holderApp, 'holder');
    timeline.watch(waiterApp, 'waiter');
    const subscriberNode = async (): Promise<number | undefined> => {
      for (const { port } of (await cluster.topology()).filter((node) => !node.failing)) {
        const clients = (await askRedis(port, (redis) => redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))) as string;
        if (/name=ioredis-cluster\(subscriber\):subscriber /.test(clients)) return port;
      }
      return undefined;
    };
    // A key whose shard keeps a live master whatever node carries the subscription: one with a replica
    // left (the first drill took one shard's replica; a fixed key could land there, next to the subscriber).
    let key = 'wake-up';
    for (let i = 0; (await cluster.shardOf(calculateSlot(prefix + key))).replicas.length === 0; i++) key = `wake-up:${i}`;
    const first = await holderApp.locks.acquire(key, { waitMs: 0 });
    const contention = waiterApp.next('contention', (e) => e.key === key);
    const waiting = waiterApp.locks.acquire(key, { waitMs: 40_000 });
    await contention;
    let port: number | undefined;
    await waitFor('the waiter’s subscription', async () => (port = await subscriberNode()) !== undefined);

    timeline.mark('sigkill-subscriber-node', { port });
    await cluster.kill(port!);
    // The waiter stands in the key's queue (the default) and hears of its grant on its instance's channel of
    // the key's slot: the only grant channel of the slot, since the holder never waited.
    const layout = new RedisKeyLayout(prefix);
    const channels = layout.grantChannel(layout.slotTag(prefix + key), '*');
    await waitFor('the subscription to move to a live node', async () => {
      for (const node of (await cluster.topology()).filter((n) => !n.failing && n.port !== port)) {
        const subscribed = (await askRedis(node.port, (redis) => redis.call('PUBSUB', 'CHANNELS', channels))) as string[];
        if (subscribed.length > 0) return true;
      }
      return false;
    });
    timeline.mark('resubscribed');
    // Only the key's shard must be served again. The whole cluster may not be: when the subscription sat on
    // the master the first drill left without a replica, its shard stays down for good (seen in CI).
    await waitFor('the key’s shard to be served by a live master', async () => {
      const { master } = await cluster.shardOf(calculateSlot(prefix + key));
      return master.port !== port && /role:master/.test(await askRedis(master.port, (redis) => redis.info('replication')));
    });
    await first.release();
    const next = await waiting;
    const file = timeline.save();
    expect(next.fencingToken).toBeGreaterThan(first.fencingToken);
    expect({ file, overlaps: timeline.overlaps() }).toEqual({ file, overlaps: [] });
    await next.release();
  });
});
