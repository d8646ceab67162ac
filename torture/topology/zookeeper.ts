import { startZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { choose, hold, lifted, type Topology } from './topology';

/**
 * Three ZooKeeper members (Zab: a quorum must agree on every write, and a session expires only by the
 * leader's count, so there is no failover window: unavailable rather than two holders). A lease is its
 * session; application 0 reaches every member through a proxy of its own.
 */
export async function startZookeeperTopology(): Promise<Topology> {
  const ensemble = await startZookeeperEnsemble({ size: 3 });
  const proxies = await Promise.all(ensemble.members.map((member) => FaultyProxy.start(Number(member.address.split(':')[1]))));
  const proxied = proxies.map((proxy) => `127.0.0.1:${proxy.port}`).join(',');
  return {
    appOptions: (slot) => ({ store: 'zookeeper', zookeeper: slot === 0 ? proxied : ensemble.connect }),
    samplerOptions: () => ({ store: 'zookeeper', zookeeper: ensemble.connect }),
    injectors: {
      ...proxyInjectors(proxies, 'a0'),
      'server-pause': async (fault) => {
        const member = choose(ensemble.members.filter((m) => m.running), fault.pick);
        const pid = member.pid!;
        process.kill(pid, 'SIGSTOP');
        await hold(fault.durationMs);
        process.kill(pid, 'SIGCONT');
        return lifted(`zookeeper:${member.id}`);
      },
      'server-restart': async (fault) => {
        const member = choose(ensemble.members, fault.pick);
        await member.kill();
        await hold(Math.min(fault.durationMs, 1_500));
        const end = Date.now();
        await member.start();
        return { target: `zookeeper:${member.id}`, end, recovered: Date.now(), detail: 'SIGKILL, restarted with its data' };
      },
      'leader-kill': async (fault) => {
        const leader = await ensemble.leader();
        await leader.kill();
        await hold(Math.min(fault.durationMs, 1_500));
        const end = Date.now();
        await leader.start();
        return { target: `zookeeper:${leader.id}`, end, recovered: Date.now(), detail: 'leader SIGKILL, restarted with its data' };
      },
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await ensemble.stop();
    },
  };
}
