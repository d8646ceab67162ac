import calculateSlot from 'cluster-key-slot';
import { startRedisCluster, type RedisCluster, type RedisClusterOptions } from '../../../scripts/servers/redis-cluster';
import { startRedisSentinel, type RedisSentinelGroup, type RedisSentinelOptions } from '../../../scripts/servers/redis-sentinel';

/**
 * One server group per test file, started the first time a test asks for it (so a file filtered down to
 * tests that need none starts none) and stopped by pid after the file's last test.
 */
function lazily<T extends { stop(): Promise<void> }>(start: () => Promise<T>): () => Promise<T> {
  let started: Promise<T> | undefined;
  afterAll(async () => {
    if (started) await (await started).stop();
  });
  return () => (started ??= start());
}

export function lazyCluster(options?: RedisClusterOptions): () => Promise<RedisCluster> {
  return lazily(() => startRedisCluster(options));
}

export function lazySentinel(options?: RedisSentinelOptions): () => Promise<RedisSentinelGroup> {
  return lazily(() => startRedisSentinel(options));
}

/** The library's Cluster form of the `redis` option for a local cluster. */
export function clusterOption(cluster: RedisCluster): { cluster: Array<{ host: string; port: number }> } {
  return { cluster: cluster.seeds.map(({ host, port }) => ({ host, port })) };
}

/** ioredis' Sentinel options for a local group. */
export function sentinelOption(group: RedisSentinelGroup): { sentinels: Array<{ host: string; port: number }>; name: string } {
  return { sentinels: group.sentinels.map(({ host, port }) => ({ host, port })), name: group.name };
}

/** Two keys (with `prefix`) that different masters serve: no single script could touch both. */
export async function keysOnTwoMasters(cluster: RedisCluster, prefix: string, stem: string): Promise<[string, string]> {
  const masterOf = async (key: string): Promise<string> => (await cluster.shardOf(calculateSlot(`${prefix}${key}`))).master.id;
  const first = `${stem}:0`;
  const firstMaster = await masterOf(first);
  for (let i = 1; ; i++) if ((await masterOf(`${stem}:${i}`)) !== firstMaster) return [first, `${stem}:${i}`];
}
