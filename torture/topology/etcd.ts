import { startEtcdCluster } from '../../scripts/servers/etcd-server';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { choose, hold, lifted, type Topology } from './topology';

/**
 * Three etcd members (Raft: a majority must agree on every write, so there is no failover window:
 * unavailable rather than two holders). Application 0 reaches every member through a proxy of its own.
 */
export async function startEtcdTopology(): Promise<Topology> {
  const cluster = await startEtcdCluster({ size: 3 });
  const proxies = await Promise.all(cluster.endpoints.map((endpoint) => FaultyProxy.start(Number(new URL(endpoint).port))));
  const proxied = proxies.map((proxy) => `http://127.0.0.1:${proxy.port}`);
  return {
    appOptions: (slot) => ({ store: 'etcd', etcd: slot === 0 ? proxied : cluster.endpoints }),
    samplerOptions: () => ({ store: 'etcd', etcd: cluster.endpoints }),
    injectors: {
      ...proxyInjectors(proxies, 'a0'),
      'server-pause': async (fault) => {
        const member = choose(cluster.members, fault.pick);
        member.pause();
        await hold(fault.durationMs);
        member.resume();
        return lifted(`etcd:${member.name}`);
      },
      'server-restart': async (fault) => {
        const member = choose(cluster.members, fault.pick);
        await member.kill();
        await hold(Math.min(fault.durationMs, 1_500));
        const end = Date.now();
        await member.start();
        return { target: `etcd:${member.name}`, end, recovered: Date.now(), detail: 'SIGKILL, restarted with its data' };
      },
      'leader-kill': async (fault) => {
        const leader = await cluster.leader();
        await leader.kill();
        await hold(Math.min(fault.durationMs, 1_500));
        const end = Date.now();
        await leader.start();
        return { target: `etcd:${leader.name}`, end, recovered: Date.now(), detail: 'leader SIGKILL, restarted with its data' };
      },
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await cluster.stop();
    },
  };
}
