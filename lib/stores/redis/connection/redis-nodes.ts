import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-client.js';

/** The runbook's and the health check's walks over a store's servers. */

/** Every primary: a Cluster's masters (once it knows them), or the one server. */
export function primaries(client: RedisClient): Redis[] {
  return client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
}

/** A Cluster client that has not connected yet knows no nodes: connect it before asking for them. */
export async function connected(client: RedisClient): Promise<void> {
  if (client.isCluster && client.status !== 'ready') await (client as Cluster).ping();
}

/** Whether an `INFO cluster` reply comes from a node running in cluster mode. */
export function runsInClusterMode(infoCluster: string): boolean {
  return /^cluster_enabled:1/m.test(infoCluster);
}

/**
 * SCAN, not KEYS, so listing never blocks Redis; on a Cluster every primary is scanned.
 */
export async function scanAll(client: RedisClient, pattern: string): Promise<string[]> {
  return (await scanPrimaries(client, pattern, Number.POSITIVE_INFINITY)).keys;
}

/** Keys a SCAN walk returned, and whether it went to the end of every primary's keyspace. */
export interface ScannedKeys {
  readonly keys: string[];
  readonly complete: boolean;
}

/** How many keys one SCAN step asks a server for. */
const SCAN_COUNT = 500;

/**
 * SCAN of every primary that stops once `maxKeys` keys were returned (a bounded look at a keyspace of any
 * size; SCAN may return a few more than it was asked for).
 */
export async function scanPrimaries(client: RedisClient, pattern: string, maxKeys: number): Promise<ScannedKeys> {
  await connected(client);
  // A single-node client of a Cluster node would list that node's locks only, and look complete. (A
  // service that refuses INFO is taken for what it claims to be.)
  if (!client.isCluster && runsInClusterMode(await (client as Redis).info('cluster').catch(() => ''))) {
    throw new Error('this server is a Redis Cluster node: listing it alone would miss the other masters’ locks; use a Cluster client');
  }
  const keys: string[] = [];
  for (const node of primaries(client)) {
    let cursor = '0';
    do {
      if (keys.length >= maxKeys) return { keys, complete: false };
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', Math.min(SCAN_COUNT, Math.max(1, maxKeys - keys.length)));
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
  }
  return { keys, complete: true };
}

/** The key prefix is literal text; only the operator's `match` is a glob. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

