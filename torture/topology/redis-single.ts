import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { scanNodeQueues } from './redis-queues';
import { hold, lifted, type Topology } from './topology';

const DEBUG = () => ['--enable-debug-command', 'yes'];

/**
 * One redis-server (DEBUG enabled, no persistence); application 0 talks to it through a faulty proxy.
 * A restart loses every key: until the holders' next renewal, exclusion rests on the fencing tokens.
 */
export async function startSingleRedis(): Promise<Topology> {
  let server: RedisServer = await startRedisServer({ args: DEBUG });
  const port = server.port;
  const proxy = await FaultyProxy.start(port);
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  probe.on('error', () => undefined);
  return {
    appOptions: (slot) => ({ redis: `redis://127.0.0.1:${slot === 0 ? proxy.port : port}` }),
    samplerOptions: () => ({ redis: `redis://127.0.0.1:${port}` }),
    scanQueues: (prefix) => scanNodeQueues(probe, prefix),
    injectors: {
      ...proxyInjectors([proxy], 'a0'),
      'server-pause': async (fault) => {
        server.pause();
        await hold(fault.durationMs);
        server.resume();
        return lifted(`redis:${port}`);
      },
      'server-restart': async (fault) => {
        await server.stop();
        await hold(Math.min(fault.durationMs, 1_500));
        server = await startRedisServer({ port, args: DEBUG });
        return lifted(`redis:${port}`, 'restarted empty (no persistence)');
      },
      'client-pause': async (fault) => {
        await askRedis(port, (redis) => redis.call('CLIENT', 'PAUSE', String(fault.durationMs), 'ALL'));
        await hold(fault.durationMs);
        return lifted(`redis:${port}`);
      },
      'debug-sleep': async (fault) => {
        const seconds = (fault.durationMs / 1_000).toFixed(2);
        // The reply comes when the sleep is over: the server did nothing else meanwhile.
        await askRedis(port, (redis) => redis.call('DEBUG', 'SLEEP', seconds));
        return lifted(`redis:${port}`, `${seconds} s`);
      },
    },
    stop: async () => {
      probe.disconnect();
      await proxy.close();
      await server.stop();
    },
  };
}

/**
 * A primary with one replica, and an ACL user that may not run WAIT (`-wait`): what a managed service or
 * a locked-down user gives. With `replicas: 1`, every grant's WAIT fails after the grant script ran.
 */
export async function startRedisWithoutWait(): Promise<Topology & { readonly user: string }> {
  const primary = await startRedisServer({ args: () => ['--repl-diskless-sync-delay', '0'] });
  const replica = await startRedisServer({ args: () => ['--replicaof', '127.0.0.1', String(primary.port), '--repl-diskless-sync-delay', '0'] });
  await waitFor('the replica to sync', async () => /master_link_status:up/.test(await askRedis(replica.port, (r) => r.info('replication'))));
  for (const node of [primary, replica]) {
    await askRedis(node.port, (redis) => redis.call('ACL', 'SETUSER', 'torture', 'on', '>torture', '~*', '&*', '+@all', '-wait'));
  }
  const probe = new Redis({ port: primary.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  probe.on('error', () => undefined);
  const url = `redis://torture:torture@127.0.0.1:${primary.port}`;
  return {
    user: 'torture',
    appOptions: () => ({ redis: url, replicas: 1 }),
    samplerOptions: () => ({ redis: `redis://127.0.0.1:${primary.port}` }),
    scanQueues: (prefix) => scanNodeQueues(probe, prefix),
    injectors: {
      'client-pause': async (fault) => {
        await askRedis(primary.port, (redis) => redis.call('CLIENT', 'PAUSE', String(fault.durationMs), 'ALL'));
        await hold(fault.durationMs);
        return lifted(`redis:${primary.port}`);
      },
    },
    stop: async () => {
      probe.disconnect();
      await Promise.all([replica.stop(), primary.stop()]);
    },
  };
}
