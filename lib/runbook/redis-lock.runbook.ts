import type { Cluster, Redis } from 'ioredis';
import type { HeldLock } from '../stores/lock-store.interface.js';
import type { RedisClient } from '../stores/redis/scripts/define-script.js';
import { RedisKeyLayout } from '../stores/redis/redis-key-layout.js';
import { forceReleaseScript } from '../stores/redis/scripts/force-release.script.js';
import { inspectScript } from '../stores/redis/scripts/inspect.script.js';

/**
 * What an operator needs when a lock looks stuck: which keys are held, by whom, with which fencing token
 * and TTL, and a deliberate force-release.
 *
 * Force-releasing is dangerous: a key that looks stuck may belong to a holder that is still running (a
 * long GC pause, a partitioned pod). Stop or isolate that holder first, check its token and TTL and the
 * business data, and rely on fencing tokens at the resource for whatever it may still write.
 */
export class RedisLockRunbook {
  private readonly layout: RedisKeyLayout;

  constructor(
    private readonly client: RedisClient,
    keyPrefix: string,
  ) {
    this.layout = new RedisKeyLayout(keyPrefix);
  }

  /** Held locks whose key matches `match` (a Redis glob applied after the prefix), by key. */
  async list(match = '*'): Promise<HeldLock[]> {
    const held: HeldLock[] = [];
    for (const redisKey of await this.scan(escapeGlob(this.layout.lockKey('')) + match)) {
      const key = this.layout.userKey(redisKey);
      const state = key === undefined ? null : await inspectScript(this.client, redisKey);
      if (key !== undefined && state) held.push({ key, ...state });
    }
    return held.sort((a, b) => a.key.localeCompare(b.key));
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const state = await inspectScript(this.client, this.layout.lockKey(key));
    return state && { key, ...state };
  }

  /** Deletes the key whoever holds it and wakes its waiters; returns what was taken away, if anything. */
  async forceRelease(key: string): Promise<{ fencingToken: number; holder: string } | null> {
    return forceReleaseScript(this.client, this.layout.lockKey(key), this.layout.releaseChannel(key));
  }

  /** SCAN, not KEYS, so listing never blocks Redis; on a Cluster every primary is scanned. */
  private async scan(pattern: string): Promise<string[]> {
    const nodes = this.client.isCluster ? (this.client as Cluster).nodes('master') : [this.client as Redis];
    const keys: string[] = [];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
    }
    return keys;
  }
}

/** The key prefix is literal text; only the operator's `match` is a glob. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
