import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import { LockConfigError } from '../../../errors/lock-config.error.js';
import { closeRedisClient } from './redis-connection.js';

/** A Cluster client's seed as ioredis takes it: a URL or `host:port`, a port, or node options. */
type StartupNode = string | number | RedisOptions;

/**
 * What a probe changes in the seed's connection options: it connects now, tries once (an unreachable seed
 * is not this check's business: the first lock call reports it, as for every store), and is nobody's
 * connection afterwards.
 */
const PROBE_OPTIONS: RedisOptions = {
  lazyConnect: true,
  retryStrategy: () => null,
  maxRetriesPerRequest: 0,
  enableReadyCheck: false,
  connectionName: 'nestjs-distributed-lock:cluster-check',
};

/** The reply of every CLUSTER command on a server started without `cluster-enabled yes`. */
const CLUSTER_DISABLED = /cluster support disabled/i;

/**
 * Refuses, at startup, a Cluster client whose seed nodes include a Redis that is not in cluster mode (the
 * usual slip: `{ cluster: ['redis://host:6379'] }` for one plain server). ioredis would retry its slot
 * refresh forever and every lock call would fail as "did not answer", although the server answered, and
 * said why. Every seed is asked on a connection of its own (`CLUSTER SLOTS`, the command ioredis itself
 * refreshes with, so a user allowed to run a Cluster client may send it), so the answer does not depend on which seed ioredis happens to try first; a
 * seed that does not answer within `timeoutMs`, or refuses the command for another reason, is left alone.
 */
export async function assertSeedsInClusterMode(cluster: Cluster, option: string, timeoutMs: number): Promise<void> {
  const seeds = (cluster as unknown as { startupNodes: StartupNode[] }).startupNodes;
  const nodeOptions = cluster.options.redisOptions ?? {};
  const answers = await Promise.all(seeds.map((seed) => askClusterSlots(seed, nodeOptions, timeoutMs)));
  const refused = answers.find((answer) => answer.disabled);
  if (!refused) return;
  throw new LockConfigError(
    option,
    refused.server,
    `seed nodes of a Redis Cluster, but ${refused.server} is not in cluster mode (it replied "${refused.reply}"); ` +
      `for one server, use the single-server form: redis: '${refused.scheme}://${refused.server}'`,
  );
}

interface SeedAnswer {
  /** host:port as ioredis parsed it: never the password. */
  readonly server: string;
  /** `rediss` when the seed is reached over TLS. */
  readonly scheme: 'redis' | 'rediss';
  readonly disabled: boolean;
  readonly reply?: string;
}

async function askClusterSlots(seed: StartupNode, nodeOptions: RedisOptions, timeoutMs: number): Promise<SeedAnswer> {
  // The seed's own fields win over redisOptions, as they do in ioredis' connection pool.
  const probe =
    typeof seed === 'object' ? new Redis({ ...nodeOptions, ...seed, ...PROBE_OPTIONS }) : new Redis(seed as string, { ...nodeOptions, ...PROBE_OPTIONS });
  probe.on('error', ignore);
  const server = `${probe.options.host ?? 'localhost'}:${probe.options.port ?? 6379}`;
  const scheme = probe.options.tls ? 'rediss' : 'redis';
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      probe.cluster('SLOTS').then(
        (): SeedAnswer => ({ server, scheme, disabled: false }),
        (error: Error): SeedAnswer => ({ server, scheme, disabled: error.name === 'ReplyError' && CLUSTER_DISABLED.test(error.message), reply: error.message }),
      ),
      new Promise<SeedAnswer>((resolve) => {
        timer = setTimeout(() => resolve({ server, scheme, disabled: false }), timeoutMs);
        timer.unref();
      }),
    ]);
    return answer;
  } finally {
    clearTimeout(timer);
    await closeRedisClient(probe, timeoutMs);
  }
}

function ignore(): void {}
