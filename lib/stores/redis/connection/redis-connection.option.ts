import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { LockConfigError } from '../../../errors/lock-config.error.js';
import { redactOptionValue } from '../../../support/redact-option-value.js';
import type { RedisClient } from './redis-client.js';

/** One seed node of a Cluster: `redis://host:port` (`rediss://` for TLS), `host:port`, or `{ host, port }`. */
export type RedisClusterSeed = string | { readonly host: string; readonly port: number };

/**
 * A Redis Cluster the library connects to itself: seed nodes (a few are enough, the rest is discovered)
 * plus ioredis Cluster options (`redisOptions` for every node's connection: password, TLS, ...).
 */
export interface RedisClusterConnectionOptions extends ClusterOptions {
  readonly cluster: readonly RedisClusterSeed[];
}

/** ioredis options with the URL inside, as node-redis takes them: `{ url, ...options }`. */
export interface RedisUrlConnectionOptions extends RedisOptions {
  readonly url: string;
}

/**
 * Where the locks live: a `redis://` / `rediss://` URL, ioredis options (Sentinel included: `sentinels`
 * and `name`), `{ url, ...ioredis options }`, `{ cluster: [seed nodes], ...Cluster options }`, or an ioredis
 * `Redis`/`Cluster` instance to reuse.
 */
export type RedisConnectionOption =
  | string
  | RedisUrlConnectionOptions
  | RedisClusterConnectionOptions
  | RedisOptions
  | RedisClient;

export function isRedisClient(value: unknown): value is RedisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RedisClient).evalsha === 'function' &&
    typeof (value as RedisClient).duplicate === 'function'
  );
}

export function isClusterOption(option: RedisConnectionOption): option is RedisClusterConnectionOptions {
  return typeof option === 'object' && !isRedisClient(option) && 'cluster' in option;
}

/**
 * Options of other Redis clients that ioredis does not know: ioredis would ignore them and connect to
 * localhost:6379. Each names what to write instead.
 */
const FOREIGN_OPTIONS: Record<string, string> = {
  socket: 'host, port and tls (ioredis options), or url',
  database: 'db',
  pingInterval: 'keepAlive',
  legacyMode: 'nothing (ioredis has no legacy mode)',
  isolationPoolOptions: 'nothing (ioredis has no isolation pool)',
  readonly: 'readOnly',
  disableOfflineQueue: 'enableOfflineQueue: false',
  rootNodes: "cluster (the library's Cluster form: { cluster: [seed nodes] })",
  defaults: "redisOptions inside { cluster: [...] }",
};

/**
 * Checks the `redis` option at startup, so that a wrong shape fails the application instead of silently
 * locking on localhost or failing every acquire later.
 */
export function assertRedisConnectionOption(option: unknown): asserts option is RedisConnectionOption {
  if (typeof option === 'string') return assertRedisUrl('redis', option);
  if (isRedisClient(option)) return assertUsableClient(option);
  if (!isPlainObject(option)) {
    throw new LockConfigError(
      'redis',
      option,
      "a Redis URL, ioredis options, { cluster: [seed nodes] }, or an ioredis client (required when store is 'redis')",
    );
  }
  rejectForeignOptions('redis', option);
  if ('cluster' in option) return assertClusterOption(option);
  if ('url' in option) assertRedisUrl('redis.url', option.url);
  assertNodeOptions('redis', option);
}

function assertClusterOption(option: Record<string, unknown>): void {
  const seeds = option.cluster;
  if (!Array.isArray(seeds) || seeds.length === 0) {
    throw new LockConfigError('redis.cluster', seeds, 'a non-empty array of seed nodes (redis:// URLs, "host:port" or { host, port })');
  }
  seeds.forEach((seed: unknown, i) => {
    const name = `redis.cluster[${i}]`;
    if (typeof seed === 'string') {
      if (/^rediss?:\/\//.test(seed)) return assertRedisUrl(name, seed);
      if (/^[^\s/:]+:\d{1,5}$/.test(seed)) return;
      throw new LockConfigError(name, redactOptionValue(seed), 'a redis:// or rediss:// URL, or "host:port" (the value is not shown: it may hold a password)');
    }
    if (isPlainObject(seed) && typeof seed.host === 'string' && Number.isInteger(seed.port)) return;
    throw new LockConfigError(name, seed, 'a redis:// URL, "host:port" or { host, port }');
  });
  if ('url' in option) throw new LockConfigError('redis.url', '(set)', 'no url next to cluster: give the URL as a seed node');
  if (option.redisOptions !== undefined) {
    if (!isPlainObject(option.redisOptions)) throw new LockConfigError('redis.redisOptions', option.redisOptions, 'ioredis options');
    rejectForeignOptions('redis.redisOptions', option.redisOptions);
    assertNodeOptions('redis.redisOptions', option.redisOptions);
  }
  assertNodeOptions('redis', option);
}

/**
 * What the lock scripts cannot work with. `keyPrefix`: ioredis prefixes declared keys but not script
 * arguments or channels, and the library computes hash slots and SCAN patterns from the keys it sees, so a
 * prefixed client would put fencing counters in another slot (CROSSSLOT on a Cluster) and hide locks from
 * the runbook; the module's own `keyPrefix` does the same job everywhere. `stringNumbers`: script replies
 * would arrive as strings and read as "not granted". `failoverDetector: false` with Sentinel: after a
 * failover the connection would stay on the old primary, which keeps accepting lock writes that the new
 * primary never sees (two holders).
 */
function assertNodeOptions(name: string, options: Record<string, unknown>): void {
  if (typeof options.keyPrefix === 'string' && options.keyPrefix !== '') {
    throw new LockConfigError(`${name}.keyPrefix`, options.keyPrefix, "no ioredis keyPrefix: use the module's keyPrefix option");
  }
  if (options.stringNumbers === true) {
    throw new LockConfigError(`${name}.stringNumbers`, true, 'stringNumbers off: the lock scripts return integers');
  }
  if (options.sentinels !== undefined && options.sentinels !== null && options.failoverDetector === false) {
    throw new LockConfigError(
      `${name}.failoverDetector`,
      false,
      'failoverDetector on with Sentinel (the default): without it, connections stay on a demoted primary after a failover',
    );
  }
}

/** A client handed in is checked the same way, through the options it was built with. */
function assertUsableClient(client: RedisClient): void {
  if (client.isCluster) {
    const options = (client as Cluster).options as ClusterOptions & { keyPrefix?: string };
    assertNodeOptions('redis (the Cluster client)', options as Record<string, unknown>);
    assertNodeOptions('redis (the Cluster client).redisOptions', (options.redisOptions ?? {}) as Record<string, unknown>);
    return;
  }
  const options = (client as Redis).options as RedisOptions;
  if (options.sentinels && !options.failoverDetector) {
    throw new LockConfigError(
      'redis (the Sentinel client).failoverDetector',
      options.failoverDetector,
      'true: without it, the client stays on a demoted primary after a failover and lock writes land where the new primary never sees them (create it with failoverDetector: true)',
    );
  }
  assertNodeOptions('redis (the client)', options as Record<string, unknown>);
}

function rejectForeignOptions(name: string, options: Record<string, unknown>): void {
  for (const key of Object.keys(options)) {
    const instead = FOREIGN_OPTIONS[key];
    if (instead) throw new LockConfigError(`${name}.${key}`, options[key], `an ioredis option: ioredis has no "${key}"; use ${instead}`);
  }
}

/** What a refused URL's message points at instead, for the two forms a URL cannot take. */
export interface RedisUrlHints {
  /** Several nodes in one URL (`redis://a:6379,b:6379`). */
  readonly severalNodes: string;
  /** A Sentinel URL (`redis+sentinel://…`), which ioredis does not read. */
  readonly sentinel: string;
}

/** The module's hints: the option's Cluster and Sentinel forms (docs/topologies.md). */
const MODULE_URL_HINTS: RedisUrlHints = {
  severalNodes: 'several nodes of a Redis Cluster are { cluster: [seed nodes] }, a Sentinel group { sentinels: [{ host, port }], name }',
  sentinel: 'for Sentinel, give ioredis options: { sentinels: [{ host, port }], name }',
};

/**
 * A URL ioredis can connect to: `redis://` or `rediss://`, one host, a numeric port if any. A refused one is
 * masked whole (it may carry a password anywhere), and the message points at the form that was meant.
 */
export function assertRedisUrl(name: string, url: unknown, hints: RedisUrlHints = MODULE_URL_HINTS): void {
  if (typeof url === 'string' && parsedRedisUrl(url)) return;
  let expected = 'a redis:// or rediss:// URL of one server (the value is not shown: it may hold a password)';
  if (typeof url === 'string' && /^\s*rediss?\+sentinel:/i.test(url)) {
    expected += `; ${hints.sentinel}`;
  } else if (typeof url === 'string' && /^\s*rediss?:\/\/[^/]*,/i.test(url)) {
    expected += `; ${hints.severalNodes}`;
  }
  throw new LockConfigError(name, typeof url === 'string' ? redactOptionValue(url) : url, expected);
}

/** The URL if it is one ioredis can connect to, else undefined (see {@link assertRedisUrl}). */
function parsedRedisUrl(url: string): URL | undefined {
  if (!/^rediss?:\/\/\S+$/.test(url)) return undefined;
  try {
    const parsed = new URL(url);
    if (parsed.hostname === '' || (parsed.port !== '' && !/^\d{1,5}$/.test(parsed.port))) return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

/**
 * `scheme://user:secret@host:port/db` → `scheme://***@host:port/db`, read by URL fields (the user-info ends
 * at the last `@` before the host, as ioredis reads it, whatever the password contains); the query, which
 * may carry a password too, is dropped. Anything that is not such a URL is masked whole.
 */
export function redactUrl(url: string): string {
  const parsed = parsedRedisUrl(url);
  if (!parsed) return redactOptionValue(url) as string;
  const credentials = parsed.username || parsed.password ? '***@' : '';
  return `${parsed.protocol}//${credentials}${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
