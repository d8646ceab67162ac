import calculateSlot from 'cluster-key-slot';
import type { Lease } from '../../lib/index';
import { startRedisCluster, type RedisCluster } from '../../scripts/servers/redis-cluster';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { DrillTimeline } from '../topology/support/drill-timeline';
import { clusterOption } from '../topology/support/topology-fixtures';
import { storedFence } from '../support/stored-lock';

// A failover on a loaded 2-core box can take far longer than alone: every step waits on a condition, never
// on a guessed sleep, so a generous bound only matters when something is really stuck.
jest.setTimeout(180_000);

/**
 * Drill "planned Cluster failover" from the seeds: `CLUSTER FAILOVER` on a replica (maintenance, a version
 * upgrade) promotes it after it caught up with its master; clients are redirected with MOVED, and the new
 * master has never seen the library's scripts (Redis does not replicate its script cache). Proves: leases on
 * that shard keep renewing across the switch (NOSCRIPT falls back to EVAL, MOVED is followed), the new
 * master holds them with their fencing tokens, and a contender is refused every held key throughout.
 */
describe('drill: CLUSTER FAILOVER while locks are held', () => {
  const prefix = testPrefix(__filename);
  let cluster: RedisCluster;
  const apps: LockApp[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await cluster.stop();
  });

  it('keeps every lease of the failed-over shard, and nobody else gets one', async () => {
    const timeline = new DrillTimeline('cluster-manual-failover');
    const options = { redis: clusterOption(cluster), keyPrefix: prefix, leaseMs: 2_000, commandTimeoutMs: 1_000 };
    const holderApp = await createLockApp(options);
    const contenderApp = await createLockApp(options);
    apps.push(holderApp, contenderApp);
    timeline.watch(holderApp, 'holder');
    timeline.watch(contenderApp, 'contender');
    const leases: Lease[] = await Promise.all(Array.from({ length: 60 }, (_, i) => holderApp.locks.acquire(`job:${i}`, { waitMs: 0 })));
    const { master, replicas } = await cluster.shardOf(calculateSlot(prefix + leases[0]!.key));
    const onShard = leases.filter((lease) => master.slots.some(([a, b]) => a <= calculateSlot(prefix + lease.key) && calculateSlot(prefix + lease.key) <= b));

    timeline.mark('cluster-failover', { from: master.port, to: replicas[0]!.port });
    await askRedis(replicas[0]!.port, (redis) => redis.call('CLUSTER', 'FAILOVER'));
    await waitFor('the replica to take over its master’s slots', async () => (await cluster.shardOf(calculateSlot(prefix + leases[0]!.key))).master.port === replicas[0]!.port);
    timeline.mark('switched');
    const switchedAt = timeline.when((e) => e.event === 'switched')!;
    const renewedSinceSwitch = (key: string): number =>
      timeline.all().filter((e) => e.actor === 'holder' && e.event === 'renewed' && e.key === key && e.at > switchedAt).length;
    // Four renewals after the switch take longer than a lease: keys left to expire would be gone by then.
    while (!onShard.every((lease) => renewedSinceSwitch(lease.key) >= 4)) {
      for (const lease of onShard.slice(0, 10)) {
        const taken = await contenderApp.locks.tryAcquire(lease.key).catch((error: unknown) => error);
        timeline.mark('contender-attempt', { key: lease.key, outcome: taken === null ? 'denied' : String(taken) }, 'contender');
        if (taken && typeof (taken as Lease).release === 'function') await (taken as Lease).release();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const stored = await Promise.all(onShard.map((lease) => askRedis(replicas[0]!.port, (redis) => storedFence(redis, `${prefix}${lease.key}`))));
    const scriptsLoaded = /cmdstat_eval:calls=[1-9]/.test(await askRedis(replicas[0]!.port, (redis) => redis.info('commandstats')));
    const file = timeline.save();

    expect(onShard.length).toBeGreaterThan(5);
    expect(stored).toEqual(onShard.map((lease) => String(lease.fencingToken)));
    expect(scriptsLoaded).toBe(true);
    expect(timeline.all().filter((e) => e.event === 'lost')).toEqual([]);
    expect(timeline.all().filter((e) => e.event === 'contender-attempt' && (e.detail as { outcome: string }).outcome !== 'denied')).toEqual([]);
    expect({ file, overlaps: timeline.overlaps() }).toEqual({ file, overlaps: [] });
    await Promise.all(leases.map((lease) => lease.release()));
  });
});
