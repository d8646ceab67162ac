import type { TortureCase } from '../cases';
import { startClusterTopology } from './cluster';
import { startEtcdTopology } from './etcd';
import { startPostgresTopology } from './postgres';
import { startRedlockTopology } from './redlock';
import { startSingleRedis, startRedisWithoutWait } from './redis-single';
import { startSentinelTopology } from './sentinel';
import type { Topology } from './topology';
import { startZookeeperTopology } from './zookeeper';

/** The case's servers, with the URL of the fenced register when it lives in the case's own database. */
export async function startTopology(def: TortureCase, prefix: string, hotKey: string): Promise<Topology & { registerUrl?: string }> {
  switch (def.topology) {
    case 'redis':
      return startSingleRedis();
    case 'redis-nowait':
      return startRedisWithoutWait();
    case 'sentinel':
      return startSentinelTopology();
    case 'cluster':
      return startClusterTopology(prefix, hotKey);
    case 'postgres':
      return startPostgresTopology();
    case 'etcd':
      return startEtcdTopology();
    case 'redlock':
      return startRedlockTopology();
    case 'zookeeper':
      return startZookeeperTopology();
  }
}
