import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { startRedisCluster, type ClusterNodeInfo } from '../../scripts/servers/redis-cluster';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { migrateSlot } from '../faults/slot-migration';
import { scanClusterQueues } from './redis-queues';
import { choose, hold, lifted, type Topology } from './topology';

/**
 * Three masters with a replica each; a node counts as failing after 3 s (above the longest pause the
 * plan gives a master, so that a pause stays a pause on a loaded box). `hotKey` names the key whose
 * slot the pauses and the migration aim at. Replication is asynchronous: a failover can lose a grant.
 */
export async function startClusterTopology(prefix: string, hotKey: string): Promise<Topology> {
  const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 3_000 });
  const seeds = cluster.seeds.map(({ host, port }) => ({ host, port }));
  const scanner = new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 1 } });
  scanner.on('error', () => undefined);
  const hotSlot = calculateSlot(`${prefix}${hotKey}`);

  /** Shards whose master still has a live replica: only those can fail over. */
  const withReplica = async (): Promise<Array<{ master: ClusterNodeInfo; replica: ClusterNodeInfo }>> => {
    const topology = await cluster.topology();
    return topology
      .filter((node) => node.role === 'master' && !node.failing && node.slots.length > 0)
      .flatMap((master) => {
        const replica = topology.find((node) => node.masterId === master.id && !node.failing);
        return replica ? [{ master, replica }] : [];
      });
  };
  const healed = async (target: string, detail: string) => {
    const end = Date.now();
    await cluster.waitUntilHealthy();
    return { target, end, recovered: Date.now(), detail };
  };

  return {
    appOptions: () => ({ redis: { cluster: seeds } }),
    samplerOptions: () => ({ redis: { cluster: seeds } }),
    scanQueues: (keyPrefix) => scanClusterQueues(scanner, keyPrefix),
    injectors: {
      failover: async (fault) => {
        const shards = await withReplica();
        if (shards.length === 0) return lifted('none', 'skipped: no shard has a replica left');
        const { master, replica } = choose(shards, fault.pick);
        // CLUSTER FAILOVER only starts it: the cluster looks healthy (the old master still serves) until
        // the replica has taken over. A manual failover that cannot complete (a replica that rejoined a
        // moment ago, not yet known everywhere) gives up silently after a few seconds: asked again then.
        let askedAt = 0;
        await waitFor(`${replica.port} to take over`, async () => {
          if (/role:master/.test(await askRedis(replica.port, (redis) => redis.info('replication')))) return true;
          if (Date.now() - askedAt > 5_000) {
            askedAt = Date.now();
            await askRedis(replica.port, (redis) => redis.call('CLUSTER', 'FAILOVER'));
          }
          return false;
        }, 60_000);
        return healed(`master:${master.port}`, `CLUSTER FAILOVER on ${replica.port}`);
      },
      'primary-kill': async (fault) => {
        const shards = await withReplica();
        if (shards.length === 0) return lifted('none', 'skipped: no shard has a replica left');
        const { master, replica } = choose(shards, fault.pick);
        await cluster.kill(master.port);
        await cluster.waitUntilHealthy();
        const end = Date.now();
        // Back empty as the new master's replica, so that the shard can fail over again (and a case with
        // replicas: 1 can be acknowledged again) later in the run.
        await cluster.rejoinAsReplica(master.port, replica.port);
        return { target: `master:${master.port}`, end, recovered: Date.now(), detail: `SIGKILL; ${replica.port} takes over; ${master.port} back as its replica` };
      },
      'server-pause': async (fault) => {
        const { master } = await cluster.shardOf(hotSlot);
        const node = cluster.nodes.get(master.port)!;
        node.pause();
        await hold(fault.durationMs);
        node.resume();
        return healed(`master:${master.port}`, 'SIGSTOP/SIGCONT of the hot slot master');
      },
      'client-pause': async (fault) => {
        const { master } = await cluster.shardOf(hotSlot);
        await askRedis(master.port, (redis) => redis.call('CLIENT', 'PAUSE', String(fault.durationMs), 'ALL'));
        await hold(fault.durationMs);
        return lifted(`master:${master.port}`);
      },
      'slot-migration': (fault) => migrateSlot(cluster, hotSlot, fault),
    },
    stop: async () => {
      scanner.disconnect();
      await cluster.stop();
    },
  };
}
