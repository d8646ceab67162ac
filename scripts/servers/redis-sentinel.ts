import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRedisServer, type RedisServer } from './redis-server';
import { askRedis, waitFor } from './server-probes';

/** A primary, its replica and three sentinels watching them, owned by one test file. */
export interface RedisSentinelGroup {
  /** The name sentinels know the group by (ioredis' `name` option). */
  readonly name: string;
  /** Where a client starts (ioredis' `sentinels` option). */
  readonly sentinels: ReadonlyArray<{ host: string; port: number }>;
  /** The data nodes, by port: the first primary and its replica. */
  readonly servers: ReadonlyMap<number, RedisServer>;
  /** The sentinel processes, by port. */
  readonly sentinelServers: ReadonlyMap<number, RedisServer>;
  /** The port every sentinel currently names as primary (throws while they disagree). */
  primaryPort(): Promise<number>;
  /**
   * `SENTINEL FAILOVER`: promotes the replica although the primary is healthy; resolves with the new
   * primary's port once every sentinel names it and it answers as a primary.
   */
  failover(): Promise<number>;
  /** Resolves with the new primary's port once every sentinel names another one than `oldPort`. */
  waitForNewPrimary(oldPort: number): Promise<number>;
  /**
   * Resolves once every sentinel sees a replica it could promote (flags just `slave`, its link to the
   * primary up). A replica that rejoined a moment ago is still flagged or shows its old link in the
   * sentinels' last INFO (refreshed every 10 s): a failover then finds no good replica (NOGOODSLAVE),
   * and a killed primary is never replaced.
   */
  waitForPromotableReplica(): Promise<void>;
  /** SIGKILL of one data node (it is not restarted). */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisSentinelOptions {
  /**
   * How long the primary may be unreachable before sentinels agree it is down and fail over.
   * @default 1500
   */
  readonly downAfterMs?: number;
  /**
   * Sentinel's failover-timeout. A replica that replicates from another address than the primary's (the
   * `replicateFrom` proxy) is "fixed" by sentinels after this long, so keep it above the test's length.
   * @default 60000
   */
  readonly failoverTimeoutMs?: number;
  /**
   * The port the replica replicates from, given the primary's: a drill puts a TCP proxy in between to lose
   * a write before it reaches the replica.
   * @default the primary's own port
   */
  readonly replicateFrom?: (primaryPort: number) => Promise<number>;
}

const NAME = 'lockgroup';

/**
 * Starts a primary and one replica (redis-server) and three redis-sentinel processes (quorum 2) on free
 * loopback ports; resolves once the replica is in sync and every sentinel knows the replica and the other
 * two sentinels. Config files and data live in temp dirs removed by stop().
 */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinelGroup> {
  const downAfterMs = options.downAfterMs ?? 1_500;
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 60_000;
  const servers = new Map<number, RedisServer>();
  const sentinelServers = new Map<number, RedisServer>();
  const dead = new Set<number>();
  const stopAll = async (): Promise<void> => {
    await Promise.all([...sentinelServers.values(), ...servers.values()].map((server) => server.stop()));
  };
  try {
    const primary = await startRedisServer({ args: () => ['--repl-diskless-sync-delay', '0'] });
    servers.set(primary.port, primary);
    const upstream = (await options.replicateFrom?.(primary.port)) ?? primary.port;
    const replica = await startRedisServer({
      args: () => ['--replicaof', '127.0.0.1', String(upstream), '--repl-diskless-sync-delay', '0'],
    });
    servers.set(replica.port, replica);
    await waitFor('the replica to sync', async () => /master_link_status:up/.test(await askRedis(replica.port, (r) => r.info('replication'))));
    const started = await Promise.all(
      [0, 1, 2].map(() =>
        startRedisServer({
          mode: 'sentinel',
          sentinelConfig: (port, dir) => {
            const file = join(dir, 'sentinel.conf');
            writeFileSync(
              file,
              [
                `port ${port}`,
                'bind 127.0.0.1',
                `dir ${dir}`,
                `sentinel monitor ${NAME} 127.0.0.1 ${primary.port} 2`,
                `sentinel down-after-milliseconds ${NAME} ${downAfterMs}`,
                `sentinel failover-timeout ${NAME} ${failoverTimeoutMs}`,
                `sentinel parallel-syncs ${NAME} 1`,
                '',
              ].join('\n'),
            );
            return file;
          },
        }),
      ),
    );
    for (const sentinel of started) sentinelServers.set(sentinel.port, sentinel);
    await waitFor('the sentinels to know each other and the replica', async () => {
      const views = await Promise.all(
        [...sentinelServers.keys()].map((port) => askRedis(port, (r) => r.call('SENTINEL', 'MASTER', NAME) as Promise<string[]>)),
      );
      return views.every((fields) => {
        const view = toRecord(fields);
        return view['num-other-sentinels'] === '2' && view['num-slaves'] === '1' && !/down/.test(view.flags ?? '');
      });
    });
  } catch (error) {
    await stopAll();
    throw error;
  }

  const sentinelPorts = [...sentinelServers.keys()];
  const primaryPort = async (): Promise<number> => {
    const named = await Promise.all(
      sentinelPorts.map((port) => askRedis(port, (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME) as Promise<[string, string]>)),
    );
    const ports = new Set(named.map(([, port]) => Number(port)));
    if (ports.size !== 1) throw new Error(`sentinels disagree on the primary: ${[...ports].join(', ')}`);
    return [...ports][0]!;
  };
  const waitForNewPrimary = async (oldPort: number): Promise<number> => {
    let found = 0;
    await waitFor('every sentinel to name a new primary that answers as one', async () => {
      const port = await primaryPort();
      if (port === oldPort) return false;
      if (!/role:master/.test(await askRedis(port, (r) => r.info('replication')))) return false;
      found = port;
      return true;
    });
    return found;
  };
  const waitForPromotableReplica = (): Promise<void> =>
    waitFor(
      'every sentinel to see a replica it could promote',
      async () => {
        const views = await Promise.all(sentinelPorts.map((port) => askRedis(port, (r) => r.call('SENTINEL', 'REPLICAS', NAME) as Promise<string[][]>)));
        return views.every((replicas) => replicas.map(toRecord).some((replica) => replica.flags === 'slave' && replica['master-link-status'] === 'ok'));
      },
      60_000,
    );
  return {
    name: NAME,
    sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
    servers,
    sentinelServers,
    primaryPort,
    failover: async () => {
      const old = await primaryPort();
      await waitForPromotableReplica();
      // The sentinel asked may judge the replica by an older INFO than the others (NOGOODSLAVE): waitFor
      // asks again until it accepts.
      await waitFor('a sentinel to accept SENTINEL FAILOVER', async () => {
        await askRedis(sentinelPorts[0]!, (r) => r.call('SENTINEL', 'FAILOVER', NAME));
        return true;
      });
      return waitForNewPrimary(old);
    },
    waitForNewPrimary,
    waitForPromotableReplica,
    kill: async (port) => {
      dead.add(port);
      await servers.get(port)!.stop();
    },
    stop: stopAll,
  };
}


function toRecord(fields: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) record[fields[i]!] = fields[i + 1]!;
  return record;
}
