import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findBinary, freePorts, startRedisServer, type RedisServer } from './redis-server';
import { askRedis, waitFor } from './server-probes';

const run = promisify(execFile);

/** One node as `CLUSTER NODES` describes it. */
export interface ClusterNodeInfo {
  readonly id: string;
  readonly port: number;
  readonly role: 'master' | 'replica';
  /** The master a replica follows. */
  readonly masterId: string | undefined;
  /** Flagged `fail` or `fail?` by the node that was asked. */
  readonly failing: boolean;
  /** Slot ranges a master serves, inclusive. */
  readonly slots: ReadonlyArray<readonly [number, number]>;
}

/** A local Redis Cluster of real redis-server processes, owned by one test file. */
export interface RedisCluster {
  /** Every node started, dead ones included, by port. */
  readonly nodes: ReadonlyMap<number, RedisServer>;
  /** Where a client starts: every node's address. */
  readonly seeds: ReadonlyArray<{ host: string; port: number }>;
  /** The cluster bus port of each node (given explicitly, not the default port + 10000). */
  readonly busPorts: ReadonlyMap<number, number>;
  /** The topology as a live node sees it. */
  topology(): Promise<ClusterNodeInfo[]>;
  /** The master currently serving `slot`, and its replicas. */
  shardOf(slot: number): Promise<{ master: ClusterNodeInfo; replicas: ClusterNodeInfo[] }>;
  /** SIGKILL of one node (it is not restarted). */
  kill(port: number): Promise<void>;
  /**
   * Starts a killed node again on its port, empty (a new node id: its old one is forgotten by every live
   * node), joins it to the cluster and makes it a replica of `masterPort`; resolves once the cluster is
   * healthy with it. What an operator does after losing a master: the shard gets its replica back.
   */
  rejoinAsReplica(port: number, masterPort: number): Promise<void>;
  /** Resolves once every live node reports every slot served and agrees who serves it. */
  waitUntilHealthy(): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  readonly masters?: number;
  readonly replicasPerMaster?: number;
  /**
   * How long a node may be unreachable before it counts as failing: it sets how fast a dead master's
   * replica takes over. Low for drills, high enough not to fail over by accident on a loaded machine.
   * @default 2000
   */
  readonly nodeTimeoutMs?: number;
}

/**
 * Starts `masters × (1 + replicasPerMaster)` redis-server nodes in cluster mode on free loopback ports (data
 * and bus ports chosen here), joins them with `redis-cli --cluster create`, and waits until the cluster is
 * healthy. Data directories live in the OS temp dir and go with stop().
 *
 * `cluster-require-full-coverage no`, as managed services run it: while one shard has no master, the
 * others keep serving (with `yes`, the whole cluster answers CLUSTERDOWN until a replica takes over).
 * `cluster-replica-validity-factor 0`: a replica that was cut off for a while may still take over, so a
 * drill that stalls a replica can still fail over to it.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 2_000;
  const cli = findBinary('redis-cli');
  if (!cli) throw new Error('redis-cli not found on PATH: install redis-tools (it joins the cluster nodes).');
  const count = masters * (1 + replicas);
  const nodes = new Map<number, RedisServer>();
  const busPorts = new Map<number, number>();
  const startNode = (port: number, busPort: number): Promise<RedisServer> =>
    startRedisServer({
      port,
      args: (_port, dir) => [
        '--cluster-enabled', 'yes',
        '--cluster-config-file', `${dir}/nodes.conf`,
        '--cluster-port', String(busPort),
        '--cluster-node-timeout', String(nodeTimeoutMs),
        '--cluster-require-full-coverage', 'no',
        '--cluster-replica-validity-factor', '0',
        '--cluster-allow-replica-migration', 'no',
        '--repl-diskless-sync-delay', '0',
      ],
    });
  try {
    const ports = await freePorts(count * 2);
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const busPort = ports[count + i]!;
        const server = await startNode(ports[i]!, busPort);
        nodes.set(server.port, server);
        busPorts.set(server.port, busPort);
      }),
    );
    const addresses = [...nodes.keys()].map((port) => `127.0.0.1:${port}`);
    await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: 60_000,
    });
  } catch (error) {
    await Promise.all([...nodes.values()].map((node) => node.stop()));
    throw error;
  }

  const dead = new Set<number>();
  const live = (): number[] => [...nodes.keys()].filter((port) => !dead.has(port));
  const topologyFrom = async (port: number): Promise<ClusterNodeInfo[]> =>
    parseClusterNodes((await askRedis(port, (redis) => redis.call('CLUSTER', 'NODES'))) as string);
  const cluster: RedisCluster = {
    nodes,
    busPorts,
    seeds: [...nodes.keys()].map((port) => ({ host: '127.0.0.1', port })),
    topology: async () => {
      let lastError: unknown;
      for (const port of live()) {
        try {
          return await topologyFrom(port);
        } catch (error) {
          lastError = error;
        }
      }
      throw lastError;
    },
    shardOf: async (slot) => {
      const topology = await cluster.topology();
      const master = topology.find((node) => node.role === 'master' && !node.failing && node.slots.some(([a, b]) => a <= slot && slot <= b));
      if (!master) throw new Error(`no live master serves slot ${slot}`);
      return { master, replicas: topology.filter((node) => node.masterId === master.id && !node.failing) };
    },
    kill: async (port) => {
      dead.add(port);
      await nodes.get(port)!.stop();
    },
    rejoinAsReplica: async (port, masterPort) => {
      const before = await cluster.topology();
      const forgotten = before.filter((node) => node.port === port).map((node) => node.id);
      const master = before.find((node) => node.port === masterPort && node.role === 'master');
      if (!master) throw new Error(`${masterPort} is no master to rejoin under`);
      // Every live node forgets the dead node's id, or the new node at its address would be taken for it.
      await Promise.all(live().map((node) => askRedis(node, async (redis) => {
        for (const id of forgotten) await redis.call('CLUSTER', 'FORGET', id).catch(() => undefined);
      })));
      const server = await startNode(port, busPorts.get(port)!);
      nodes.set(port, server);
      dead.delete(port);
      await askRedis(port, (redis) => redis.call('CLUSTER', 'MEET', '127.0.0.1', String(masterPort), String(busPorts.get(masterPort)!)));
      await waitFor(`${port} to know ${masterPort} as a master`, async () =>
        (await topologyFrom(port)).some((node) => node.id === master.id && node.role === 'master'),
      );
      await askRedis(port, (redis) => redis.call('CLUSTER', 'REPLICATE', master.id));
      await healthy();
    },
    waitUntilHealthy: () => healthy(),
    stop: async () => {
      await Promise.all([...nodes.values()].map((node) => node.stop()));
    },
  };
  /**
   * Every live node: cluster state ok, all slots served, the same owners as every other node, and (as a
   * replica) its replication link up. At start, also every master with its replicas attached.
   */
  const healthy = (replicasPerMaster?: number): Promise<void> =>
    waitFor('the cluster to serve every slot from an agreed master, replicas in sync', async () => {
      const views = await Promise.all(
        live().map(async (port) => {
          const [info, replication, nodesText] = await askRedis(port, (redis) =>
            Promise.all([redis.call('CLUSTER', 'INFO'), redis.info('replication'), redis.call('CLUSTER', 'NODES')]),
          );
          if (!/cluster_state:ok/.test(info as string) || !/cluster_slots_ok:16384/.test(info as string)) return undefined;
          if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) return undefined;
          const topology = parseClusterNodes(nodesText as string);
          if (replicasPerMaster !== undefined) {
            const attached = topology.filter((node) => node.role === 'replica' && node.masterId !== undefined).length;
            if (attached !== masters * replicasPerMaster) return undefined;
          }
          return slotOwners(topology, dead);
        }),
      );
      return views.every((view) => view !== undefined && view === views[0]);
    }, 60_000);
  try {
    await healthy(replicas);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** Parses `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot>...` */
export function parseClusterNodes(text: string): ClusterNodeInfo[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.trim().split(' ') as [string, string, string, string, ...string[]];
      const flagList = flags.split(',');
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)![1]),
        role: flagList.includes('master') ? ('master' as const) : ('replica' as const),
        masterId: master === '-' ? undefined : master,
        failing: flagList.includes('fail') || flagList.includes('fail?'),
        slots: slots
          .filter((slot) => !slot.startsWith('['))
          .map((slot) => {
            const [from, to] = slot.split('-').map(Number) as [number, number | undefined];
            return [from, to ?? from] as const;
          }),
      };
    });
}

/** "ranges→port" of every live master: equal strings mean two nodes agree on who serves what. */
function slotOwners(topology: ClusterNodeInfo[], dead: ReadonlySet<number>): string | undefined {
  const masters = topology.filter((node) => node.role === 'master' && node.slots.length > 0);
  if (masters.some((node) => dead.has(node.port) || node.failing)) return undefined;
  return masters
    .map((node) => `${node.slots.map(([a, b]) => `${a}-${b}`).join(',')}>${node.port}`)
    .sort()
    .join(' ');
}
