import type { Redis, RedisOptions } from 'ioredis';
import { LockConfigError } from '../../errors/lock-config.error.js';
import { assertRedisUrl, isRedisClient, type RedisUrlConnectionOptions } from '../redis/connection/redis-connection.option.js';

/**
 * One independent Redis master of a Redlock quorum: a `redis://` / `rediss://` URL, ioredis options
 * (`{ host, port, password, tls }` or `{ url, ...options }`), or an ioredis `Redis` instance to reuse (never
 * closed by the module). Never a Cluster or a Sentinel group: each master must be one server that fails on
 * its own.
 */
export type RedlockMaster = string | RedisUrlConnectionOptions | RedisOptions | Redis;

/** The `redlock` module option: the masters, and nothing else to tune (see docs/redlock.md). */
export interface RedlockConnectionOption {
  /**
   * The masters, an odd number of at least 3 distinct servers (3 survives one failure, 5 two). A grant
   * needs a majority of them.
   */
  readonly masters: readonly RedlockMaster[];
}

const EXPECTED = "{ masters: [...] } with an odd number (3, 5, 7...) of distinct Redis masters (required when store is 'redlock')";

/**
 * Checks the `redlock` option at startup: the shape, every master, an odd count of at least 3 (an even
 * count buys no extra failure tolerance and a tie can grant nobody), and no server named twice (two
 * entries on one server would let one crash cost two votes, and one server give a majority alone).
 */
export function assertRedlockOption(option: unknown): asserts option is RedlockConnectionOption {
  if (typeof option !== 'object' || option === null || Array.isArray(option) || isRedisClient(option)) {
    throw new LockConfigError('redlock', option, EXPECTED);
  }
  for (const name of Object.keys(option)) {
    if (name !== 'masters') throw new LockConfigError(`redlock.${name}`, '(set)', 'no such option: redlock takes masters only (typo?)');
  }
  const { masters } = option as { masters?: unknown };
  if (!Array.isArray(masters)) throw new LockConfigError('redlock.masters', masters, EXPECTED);
  masters.forEach((master, i) => assertMaster(`redlock.masters[${i}]`, master));
  if (masters.length < 3 || masters.length % 2 === 0) {
    throw new LockConfigError(
      'redlock.masters',
      `${masters.length} master(s)`,
      'an odd number of at least 3 masters: a majority of 3 survives one failure, of 5 two; an even count adds a server and no tolerance',
    );
  }
  const seen = new Map<string, number>();
  masters.forEach((master, i) => {
    const server = serverOf(master as RedlockMaster);
    const first = seen.get(server);
    if (first !== undefined) {
      throw new LockConfigError(`redlock.masters[${i}]`, server, `a server not already listed (redlock.masters[${first}] names it): every master must fail on its own`);
    }
    seen.set(server, i);
  });
}

function assertMaster(name: string, master: unknown): void {
  if (typeof master === 'string') return assertRedisUrl(name, master);
  if (isRedisClient(master)) {
    if (master.isCluster) throw new LockConfigError(name, 'a Cluster client', 'one Redis server (a Redlock master is never a Cluster)');
    return assertNodeOptions(name, (master as Redis).options);
  }
  if (typeof master !== 'object' || master === null || Array.isArray(master)) {
    throw new LockConfigError(name, master, 'a redis:// URL, ioredis options of one server, or an ioredis Redis client');
  }
  if ('cluster' in master) throw new LockConfigError(`${name}.cluster`, '(set)', 'one Redis server (a Redlock master is never a Cluster)');
  if ('url' in master) assertRedisUrl(`${name}.url`, (master as { url: unknown }).url);
  assertNodeOptions(name, master as RedisOptions);
}

/**
 * A Sentinel group fails over, so it is not an independent master; a client `keyPrefix` would move the
 * fencing counters out of the scripts' sight (see the Redis store's option check).
 */
function assertNodeOptions(name: string, options: RedisOptions): void {
  if (options.sentinels) throw new LockConfigError(`${name}.sentinels`, '(set)', 'one Redis server: a Sentinel group is one replicated master, not an independent one');
  if (typeof options.keyPrefix === 'string' && options.keyPrefix !== '') {
    throw new LockConfigError(`${name}.keyPrefix`, options.keyPrefix, "no ioredis keyPrefix: use the module's keyPrefix option");
  }
  if (options.stringNumbers === true) throw new LockConfigError(`${name}.stringNumbers`, true, 'stringNumbers off: the lock scripts return integers');
}

/** `host:port` (or the socket path) a master names, never its credentials: what duplicates and errors compare. */
export function serverOf(master: RedlockMaster): string {
  if (typeof master === 'string') return hostPortOfUrl(master);
  const options: RedisOptions & { url?: string } = isRedisClient(master) ? master.options : master;
  if (typeof options.url === 'string') return hostPortOfUrl(options.url);
  if (options.path) return options.path;
  return `${(options.host ?? 'localhost').toLowerCase()}:${options.port ?? 6379}`;
}

function hostPortOfUrl(url: string): string {
  const { hostname, port } = new URL(url);
  return `${hostname.toLowerCase()}:${port || 6379}`;
}

