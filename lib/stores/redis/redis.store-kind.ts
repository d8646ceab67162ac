import type { Cluster } from 'ioredis';
import { LockConfigError } from '../../errors/lock-config.error.js';
import { booleanOption } from '../../support/boolean-option.js';
import { checkedAtStartup, refuseForeignConnection, type LockStoreKindDefinition } from '../lock-store-kind.interface.js';
import { createRedisConnection } from './connection/redis-client.factory.js';
import { assertSeedsInClusterMode } from './connection/cluster-mode.check.js';
import { assertRedisConnectionOption, assertRedisUrl, isRedisClient, type RedisConnectionOption } from './connection/redis-connection.option.js';
import { RedisLockStore } from './redis-lock.store.js';
import { connectToRedisUrl } from './redis-url-connection.js';

/** The module options of `store: 'redis'` (the default store). */
export interface RedisModuleOptions {
  /**
   * Where the locks live: a URL (`redis://`, `rediss://` for TLS, user and password for ACL), ioredis
   * options (Sentinel: `{ sentinels, name }`), `{ url, ...ioredis options }`, a Redis Cluster as
   * `{ cluster: [seed nodes], ...ioredis Cluster options }`, or an ioredis `Redis`/`Cluster` instance to
   * reuse (the module then never closes it). Required when `store` is `'redis'`, so a missing environment
   * variable fails at startup instead of silently locking on localhost. See docs/topologies.md.
   */
  redis?: RedisConnectionOption;
  /**
   * Redis only: how many replicas must acknowledge each grant and renewal (`WAIT`) before it counts. A grant
   * not acknowledged within half of `commandTimeoutMs` is released and the acquisition retried (within
   * `waitMs`), so a failover to an acknowledging replica cannot lose it. Costs a replica round trip per
   * grant and renewal; with fewer than this many replicas reachable, locks fail closed.
   * @default 0
   */
  replicas?: number;
  /**
   * Redis only: a plain lock's waiters queue in Redis, first come first served across every instance. A
   * release hands the key to the next waiter in the same step (with its fencing token) and wakes only that
   * waiter, so a hot key passes from instance to instance in turn, with no herd and nobody starved. An
   * uncontended acquisition is untouched: one script that looks at the key alone, so a single attempt
   * (`tryAcquire`, or a waiter's first) may take a key in the moment it comes free by expiry (a crashed
   * holder, a minimum hold ending) ahead of the line; `fair: true` closes that too. `false`: every
   * instance's first waiter is woken by a release and they race for the key (first come first served
   * within one instance only: a hot key can starve whole instances). See docs/performance.md.
   * @default true
   */
  queue?: boolean;
  /**
   * Redis only: strict first come first served. Beyond `queue`, a single attempt never takes a key while
   * anybody stands in line, even one that just came free by expiry, and readers, writers and semaphore
   * permits queue too, in a line of their own per key: a released permit goes to the next waiter in line
   * (docs/lock-shapes.md). Costs an uncontended acquisition one more command inside Redis (the look for a
   * line); see docs/performance.md. With `replicas`, a waiter's grant (its own, or handed over by a release)
   * counts only once they acknowledged it, at one more round trip per queued grant.
   * @default false
   */
  fair?: boolean;
  /**
   * Redis 7 only: wake waiters over sharded pub/sub (SSUBSCRIBE / SPUBLISH), so on a Cluster a release is
   * announced on its own shard instead of broadcast to every node.
   * @default false
   */
  shardedPubSub?: boolean;
}

/** The `redis` store's options once checked. */
export interface RedisStoreSettings {
  readonly connection: RedisConnectionOption;
  readonly replicas: number;
  readonly queue: boolean;
  readonly fair: boolean;
  readonly shardedPubSub: boolean;
}

/** Replicas a grant waits for when the option is unset: none. */
const NO_REPLICAS = 0;

/** `store: 'redis'`: one server, Sentinel or Cluster (docs/topologies.md). */
/** Why `queue` and `fair` mean nothing with another store: what that store does for waiters instead. */
const FAIR_ELSEWHERE: Readonly<Record<string, string>> = {
  "'etcd'": 'its waiters queue in etcd anyway (first come, first served)',
  "'zookeeper'": 'its waiters queue in the ensemble anyway (first come, first served)',
  "'redlock'": 'Redlock keeps no queue (one across independent masters would need a majority of its own); waiters retry when woken by a release',
  "'postgres'": 'PostgreSQL keeps no queue',
};

export const redisStoreKind: LockStoreKindDefinition<'redis', RedisStoreSettings> = {
  name: 'redis',
  optionNames: ['redis', 'replicas', 'queue', 'fair', 'shardedPubSub'],
  storeClassName: 'RedisLockStore',
  resolve: (options) => {
    assertRedisConnectionOption(options.redis);
    const replicas = replicasOption(options.replicas);
    const shardedPubSub = booleanOption('shardedPubSub', options.shardedPubSub, false);
    const fair = booleanOption('fair', options.fair, false);
    const queue = booleanOption('queue', options.queue, true);
    if (fair && !queue) throw new LockConfigError('queue', false, 'true or left out with fair: true, which queues every waiter');
    return { connection: options.redis, replicas, queue, fair, shardedPubSub };
  },
  refuseForeign: (options, chosen) => {
    refuseForeignConnection('redis', 'redis', options, chosen);
    const replicas = replicasOption(options.replicas);
    const shardedPubSub = booleanOption('shardedPubSub', options.shardedPubSub, false);
    if (replicas > 0 || shardedPubSub) {
      throw new LockConfigError(replicas > 0 ? 'replicas' : 'shardedPubSub', replicas > 0 ? replicas : shardedPubSub, "only with store 'redis'");
    }
    if (!booleanOption('queue', options.queue, true)) {
      throw new LockConfigError('queue', false, `only with store 'redis'; store is ${chosen}: ${FAIR_ELSEWHERE[chosen] ?? 'it keeps no queue'}`);
    }
    if (booleanOption('fair', options.fair, false)) {
      throw new LockConfigError('fair', true, `only with store 'redis'; store is ${chosen}: ${FAIR_ELSEWHERE[chosen] ?? 'it keeps no queue'}`);
    }
  },
  create: async (settings, { keyPrefix, commandTimeoutMs }) => {
    const connection = createRedisConnection(settings.connection, { shardedPubSub: settings.shardedPubSub, closeTimeoutMs: commandTimeoutMs });
    const store = new RedisLockStore(connection, { keyPrefix, commandTimeoutMs, replicas: settings.replicas, queue: settings.queue, fair: settings.fair });
    const { client } = connection;
    if (!client.isCluster && settings.replicas === 0) return store;
    return checkedAtStartup(store, async (created) => {
      if (client.isCluster) await assertSeedsInClusterMode(client as Cluster, clusterOptionName(settings.connection), commandTimeoutMs);
      if (settings.replicas > 0) await created.checkAcknowledgements();
    });
  },
  runbook: {
    flag: 'redis',
    env: 'REDIS_URL',
    address: '<redis:// URL> (one node is enough on a Cluster)',
    checkAddress: (url) => assertRedisUrl('--redis', url, RUNBOOK_URL_HINTS),
    open: async (url, { keyPrefix, commandTimeoutMs }) => {
      const connection = await connectToRedisUrl(url, { timeoutMs: commandTimeoutMs, closeTimeoutMs: 2_000 });
      return new RedisLockStore(connection, { keyPrefix, commandTimeoutMs });
    },
  },
};

/**
 * The runbook takes one node's URL, never ioredis options: on a Cluster any node leads to the others, behind
 * Sentinel the primary's address is one question to a sentinel away.
 */
const RUNBOOK_URL_HINTS = {
  severalNodes: 'give one node: any node of a Cluster is enough, the runbook finds the others',
  sentinel: "behind Sentinel, give the primary's redis:// URL, which a sentinel tells: redis-cli -p 26379 SENTINEL GET-MASTER-ADDR-BY-NAME <name>",
};

/** How a refusal names the Cluster the user configured: their seed list, or the client they handed in. */
function clusterOptionName(option: RedisConnectionOption): string {
  return isRedisClient(option) ? 'redis (the Cluster client)' : 'redis.cluster';
}

function replicasOption(value: unknown): number {
  const replicas = value ?? NO_REPLICAS;
  if (!Number.isInteger(replicas) || (replicas as number) < 0 || (replicas as number) > 16) {
    throw new LockConfigError('replicas', replicas, 'a whole number of replicas from 0 to 16');
  }
  return replicas as number;
}
