import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { startRedisSentinel } from '../../scripts/servers/redis-sentinel';
import { askRedis, waitFor } from '../../scripts/servers/server-probes';
import { scanNodeQueues } from './redis-queues';
import { SentinelSwitches } from './sentinel-switches';
import { hold, lifted, type Topology } from './topology';

/**
 * A primary, a replica and three sentinels (quorum 2, down after 1.5 s). A killed primary comes back as a
 * replica of the new one, so that the next failover has somewhere to go. Replication is asynchronous: a
 * grant the primary had not yet shipped is lost with a failover (the window `replicas: 1` narrows).
 */
export async function startSentinelTopology(): Promise<Topology> {
  const group = await startRedisSentinel({ downAfterMs: 1_500 });
  const nodes = new Map<number, RedisServer>(group.servers);
  const option = { sentinels: group.sentinels.map(({ host, port }) => ({ host, port })), name: group.name };

  const inSync = (): Promise<void> =>
    waitFor(
      'the primary to have its replica in sync',
      async () => /connected_slaves:1[\s\S]*state=online/.test(await askRedis(await group.primaryPort(), (redis) => redis.info('replication'))),
      60_000,
    );
  /** Brings a killed node back on its port as a replica of the current primary. */
  const rejoin = async (port: number, primary: number): Promise<void> => {
    nodes.set(port, await startRedisServer({ port, args: () => ['--replicaof', '127.0.0.1', String(primary), '--repl-diskless-sync-delay', '0'] }));
    await inSync();
  };
  const recovered = async (target: string, detail?: string) => {
    const end = Date.now();
    await inSync();
    return { target, end, recovered: Date.now(), ...(detail ? { detail } : {}) };
  };

  let switches: SentinelSwitches | undefined;
  const scripted = <T>(run: () => Promise<T>): Promise<T> => (switches ? switches.scriptedDuring(run) : run());

  return {
    appOptions: () => ({ redis: option }),
    samplerOptions: () => ({ redis: option }),
    scanQueues: async (prefix) => askRedis(await group.primaryPort(), (redis) => scanNodeQueues(redis, prefix)),
    injectors: {
      failover: () =>
        scripted(async () => {
          const old = await group.primaryPort();
          const next = await group.failover();
          return recovered(`primary:${old}`, `SENTINEL FAILOVER to ${next}`);
        }),
      'primary-kill': () =>
        scripted(async () => {
          // Killed while no replica can be promoted, the primary would never be replaced.
          await group.waitForPromotableReplica();
          const old = await group.primaryPort();
          await nodes.get(old)!.stop();
          const next = await group.waitForNewPrimary(old);
          const end = Date.now();
          await rejoin(old, next);
          return { target: `primary:${old}`, end, recovered: Date.now(), detail: `SIGKILL; ${next} promoted; ${old} back as its replica` };
        }),
      'server-pause': async (fault) => {
        const old = await group.primaryPort();
        const node = nodes.get(old)!;
        node.pause();
        await hold(fault.durationMs);
        node.resume();
        const now = await group.primaryPort().catch(() => old);
        return recovered(`primary:${old}`, now === old ? undefined : `failed over to ${now}`);
      },
      'client-pause': async (fault) => {
        const old = await group.primaryPort();
        await askRedis(old, (redis) => redis.call('CLIENT', 'PAUSE', String(fault.durationMs), 'ALL'));
        await hold(fault.durationMs);
        return lifted(`primary:${old}`);
      },
    },
    watchUnplanned: (report) => {
      switches = new SentinelSwitches(group.sentinels, inSync, report);
    },
    stop: async () => {
      switches?.close();
      await group.stop();
      await Promise.all([...nodes.values()].map((node) => node.stop()));
    },
  };
}
