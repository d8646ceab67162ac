import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { askRedis } from '../../scripts/servers/server-probes';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { choose, hold, lifted, type Topology } from './topology';

const DEBUG = () => ['--enable-debug-command', 'yes'];
const MASTERS = 3;

/**
 * Three independent redis-servers (DEBUG enabled, no persistence), the masters of a Redlock store; a grant
 * needs two of them. Application 0 reaches each through a faulty proxy of its own. A master restarted
 * empty forgets its copies and its fencing counter: until the holders' next renewal, exclusion rests on
 * the two other masters and on the fencing tokens.
 */
export async function startRedlockTopology(): Promise<Topology> {
  const servers: RedisServer[] = [];
  for (let i = 0; i < MASTERS; i++) servers.push(await startRedisServer({ args: DEBUG }));
  const ports = servers.map((server) => server.port);
  const proxies = await Promise.all(ports.map((port) => FaultyProxy.start(port)));
  const urls = (through: readonly number[]) => through.map((port) => `redis://127.0.0.1:${port}`);
  const master = (pick: number) => {
    const index = Math.min(MASTERS - 1, Math.floor(pick * MASTERS));
    return { index, port: ports[index]!, target: `redis:${ports[index]}` };
  };
  return {
    appOptions: (slot) => ({ store: 'redlock', redlock: { masters: urls(slot === 0 ? proxies.map((proxy) => proxy.port) : ports) } }),
    samplerOptions: () => ({ store: 'redlock', redlock: { masters: urls(ports) } }),
    injectors: {
      ...proxyInjectors(proxies, 'a0'),
      'server-pause': async (fault) => {
        const server = choose(servers, fault.pick);
        server.pause();
        await hold(fault.durationMs);
        server.resume();
        return lifted(`redis:${server.port}`);
      },
      'server-restart': async (fault) => {
        const { index, port, target } = master(fault.pick);
        await servers[index]!.stop();
        await hold(Math.min(fault.durationMs, 1_500));
        servers[index] = await startRedisServer({ port, args: DEBUG });
        return lifted(target, 'restarted empty (no persistence)');
      },
      'client-pause': async (fault) => {
        const { port, target } = master(fault.pick);
        await askRedis(port, (redis) => redis.call('CLIENT', 'PAUSE', String(fault.durationMs), 'ALL'));
        await hold(fault.durationMs);
        return lifted(target);
      },
      'debug-sleep': async (fault) => {
        const { port, target } = master(fault.pick);
        const seconds = (fault.durationMs / 1_000).toFixed(2);
        await askRedis(port, (redis) => redis.call('DEBUG', 'SLEEP', seconds));
        return lifted(target, `${seconds} s`);
      },
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await Promise.all(servers.map((server) => server.stop()));
    },
  };
}
