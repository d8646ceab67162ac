import { createEtcdLockStore } from '../stores/etcd/etcd-client.factory.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { PostgresLockStore } from '../stores/postgres/postgres-lock.store.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import { connectToRedisUrl } from '../stores/redis/redis-url-connection.js';

/** How long one store command of the runbook may take: an operator waits, a SCAN of a big keyspace takes a while. */
const RUNBOOK_COMMAND_TIMEOUT_MS = 10_000;

/**
 * A store the runbook can open from the command line: `--<flag> <address>` (or the environment variable),
 * then the `LockStore` contract's `list`, `inspect` and `forceRelease` do the rest. Adding a store is one
 * entry here.
 */
export interface RunbookStore {
  /** The flag that names the store's address, without dashes: `redis` for `--redis <url>`. */
  readonly flag: string;
  /** Used when the flag is not given. */
  readonly env: string;
  /** For the usage text: `<url>`. */
  readonly address: string;
  open(address: string, keyPrefix: string): Promise<LockStore>;
}

export const RUNBOOK_STORES: readonly RunbookStore[] = [
  {
    flag: 'redis',
    env: 'REDIS_URL',
    address: '<redis:// URL> (one node is enough on a Cluster)',
    open: async (url, keyPrefix) => {
      const connection = await connectToRedisUrl(url, { timeoutMs: RUNBOOK_COMMAND_TIMEOUT_MS, closeTimeoutMs: 2_000 });
      return new RedisLockStore(connection, { keyPrefix, commandTimeoutMs: RUNBOOK_COMMAND_TIMEOUT_MS });
    },
  },
  {
    flag: 'postgres',
    env: 'DATABASE_URL',
    address: '<postgres:// URL>',
    // Reads the lease table the applications use; an operator's tool never creates one.
    open: (url, keyPrefix) =>
      PostgresLockStore.create({ connection: url, keyPrefix, commandTimeoutMs: RUNBOOK_COMMAND_TIMEOUT_MS, createTable: false }),
  },
  {
    flag: 'etcd',
    env: 'ETCD_ENDPOINTS',
    address: '<http:// endpoint[,endpoint…]>',
    open: (endpoints, keyPrefix) =>
      createEtcdLockStore(endpoints.split(','), { keyPrefix, commandTimeoutMs: RUNBOOK_COMMAND_TIMEOUT_MS }),
  },
];
