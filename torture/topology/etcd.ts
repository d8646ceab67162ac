import { startEtcdCluster } from '../../scripts/servers/etcd-server';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { ensembleInjectors, ensembleMember } from './ensemble-faults';
import type { Topology } from './topology';

/**
 * Three etcd members (Raft: a majority must agree on every write, so there is no failover window:
 * unavailable rather than two holders). Application 0 reaches every member through a proxy of its own.
 */
export async function startEtcdTopology(): Promise<Topology> {
  const cluster = await startEtcdCluster({ size: 3 });
  const proxies = await Promise.all(cluster.endpoints.map((endpoint) => FaultyProxy.start(Number(new URL(endpoint).port))));
  const proxied = proxies.map((proxy) => `http://127.0.0.1:${proxy.port}`);
  const members = cluster.members.map((member) => ensembleMember(`etcd:${member.name}`, member));
  return {
    appOptions: (slot) => ({ store: 'etcd', etcd: slot === 0 ? proxied : cluster.endpoints }),
    samplerOptions: () => ({ store: 'etcd', etcd: cluster.endpoints }),
    injectors: {
      ...proxyInjectors(proxies, 'a0'),
      ...ensembleInjectors(members, async () => members[cluster.members.indexOf(await cluster.leader())]!),
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await cluster.stop();
    },
  };
}
