import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { RedisConnection } from './redis-connection.js';
import { isClusterOption, isRedisClient, type RedisConnectionOption, type RedisClusterSeed } from './redis-connection.option.js';
import type { RedisClient } from './redis-client.js';


export interface RedisConnectionSettings {
  /** Waiters subscribe with SSUBSCRIBE (and releases announce with SPUBLISH). */
  readonly shardedPubSub?: boolean;
  /** Bound on closing: QUIT that gets no answer in this long is cut with disconnect(). */
  readonly closeTimeoutMs?: number;
}

/**
 * Connections the library opens fail a queued command after one reconnect attempt instead of ioredis'
 * default twenty, so an outage reaches callers as an error quickly: locks fail closed, not slow. They
 * connect on first use, so an application that fails to start leaves no socket behind. A READONLY reply
 * means the server was demoted to a replica under us: the command did not run and fails (its caller retries
 * or counts the outcome unknown), and the connection is re-established, through Sentinel to the new primary.
 * Not re-sent by ioredis: against a server that stays a replica that would loop forever.
 */
const OWNED_CLIENT_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectionName: 'nestjs-distributed-lock',
  lazyConnect: true,
  reconnectOnError: (error) => error.message.startsWith('READONLY'),
};

/**
 * With Sentinel, the connections follow a failover the moment a sentinel announces it (`+switch-master`):
 * without this they stay on the old primary, which keeps accepting writes until Sentinel demotes it seconds
 * later, and every lock written there in between is invisible to the new primary.
 */
function ownedOptions(options: RedisOptions): RedisOptions {
  return { ...OWNED_CLIENT_DEFAULTS, ...(options.sentinels ? { failoverDetector: true } : {}), ...options };
}

function clusterSeed(seed: RedisClusterSeed): string | { host: string; port: number } {
  if (typeof seed !== 'string' || /^rediss?:\/\//.test(seed)) return seed;
  const at = seed.lastIndexOf(':');
  return { host: seed.slice(0, at), port: Number(seed.slice(at + 1)) };
}

/** Opens (or adopts) the command connection for `option`; see {@link RedisConnection}. */
export function createRedisConnection(option: RedisConnectionOption, settings: RedisConnectionSettings = {}): RedisConnection {
  const sharded = settings.shardedPubSub ?? false;
  const closeTimeoutMs = settings.closeTimeoutMs ?? 2_000;
  if (isRedisClient(option)) return new RedisConnection(option, { owned: false, sharded, closeTimeoutMs });
  let client: RedisClient;
  if (typeof option === 'string') {
    client = new Redis(option, OWNED_CLIENT_DEFAULTS);
  } else if (isClusterOption(option)) {
    const { cluster: seeds, redisOptions, ...clusterOptions } = option;
    const options: ClusterOptions = {
      lazyConnect: true,
      shardedSubscribers: sharded,
      ...clusterOptions,
      redisOptions: { connectionName: OWNED_CLIENT_DEFAULTS.connectionName, ...redisOptions },
    };
    client = new Cluster(seeds.map(clusterSeed), options);
  } else if ('url' in option) {
    const { url, ...options } = option;
    client = new Redis(url, ownedOptions(options));
  } else {
    client = new Redis(ownedOptions(option));
  }
  return new RedisConnection(client, { owned: true, sharded, closeTimeoutMs });
}
