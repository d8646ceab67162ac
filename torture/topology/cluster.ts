import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { startRedisCluster, type ClusterNodeInfo } from '../../scripts/servers/redis-cluster';
import { askRedis } from '../../scripts/servers/server-probes';
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
        await askRedis(replica.port, (redis) => redis.call('CLUSTER', 'FAILOVER'));
        return healed(`master:${master.port}`, `CLUSTER FAILOVER on ${replica.port}`);
      },
      'primary-kill': async (fault) => {
        const shards = await withReplica();
        if (shards.length === 0) return lifted('none', 'skipped: no shard has a replica left');
        const { master, replica } = choose(shards, fault.pick);
        await cluster.kill(master.port);
        return healed(`master:${master.port}`, `SIGKILL; ${replica.port} takes over`);
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
