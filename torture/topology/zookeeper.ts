import { startZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { ensembleInjectors, ensembleMember } from './ensemble-faults';
import type { Topology } from './topology';

/**
 * Three ZooKeeper members (Zab: a quorum must agree on every write, and a session expires only by the
 * leader's count, so there is no failover window: unavailable rather than two holders). A lease is its
 * session; application 0 reaches every member through a proxy of its own.
 */
export async function startZookeeperTopology(): Promise<Topology> {
  const ensemble = await startZookeeperEnsemble({ size: 3 });
  const proxies = await Promise.all(ensemble.members.map((member) => FaultyProxy.start(Number(member.address.split(':')[1]))));
  const proxied = proxies.map((proxy) => `127.0.0.1:${proxy.port}`).join(',');
  const members = ensemble.members.map((member) => ensembleMember(`zookeeper:${member.id}`, member));
  return {
    appOptions: (slot) => ({ store: 'zookeeper', zookeeper: slot === 0 ? proxied : ensemble.connect }),
    samplerOptions: () => ({ store: 'zookeeper', zookeeper: ensemble.connect }),
    injectors: {
      ...proxyInjectors(proxies, 'a0'),
      ...ensembleInjectors(members, async () => members[ensemble.members.indexOf(await ensemble.leader())]!),
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await ensemble.stop();
    },
  };
}
