import type { ForceReleaseResult, HeldLock, PrefixSurvey, PrefixSurveyLimits } from '../stores/lock-store.interface.js';
import { createRedisConnection } from '../stores/redis/connection/redis-client.factory.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import type { RedisClient } from '../stores/redis/connection/redis-client.js';

/**
 * The runbook's operations from code, over an ioredis `Redis` or `Cluster` client (on a Cluster, listing
 * scans every primary). For keys typed as users think of them, the CLI's `LockRunbook` decodes them.
 *
 * Force-releasing is dangerous: a key that looks stuck may belong to a holder that is still running (a
 * long GC pause, a partitioned pod). Stop or isolate that holder first, check its token and TTL and the
 * business data, and rely on fencing tokens at the resource for whatever it may still write. Pass the
 * fencing token you inspected to `forceRelease`, so that a holder that took over since is left alone.
 */
export class RedisLockRunbook {
  private readonly store: RedisLockStore;

  /** `client` stays the caller's: the runbook never closes it. */
  constructor(client: RedisClient, keyPrefix: string) {
    this.store = new RedisLockStore(createRedisConnection(client), { keyPrefix, commandTimeoutMs: 10_000 });
  }

  /** Held locks whose key matches `match` (`*` and `?` globs after the prefix), by key. */
  list(match = '*'): Promise<HeldLock[]> {
    return this.store.list(match);
  }

  /**
   * Held locks on the same server under other key prefixes, counted by prefix from a bounded walk: where to
   * look when `list` finds nothing under this one. Never a token.
   */
  heldUnderOtherPrefixes(limits?: PrefixSurveyLimits): Promise<PrefixSurvey> {
    return this.store.heldUnderOtherPrefixes(limits);
  }

  inspect(key: string): Promise<HeldLock | null> {
    return this.store.inspect(key);
  }

  /**
   * Deletes the key and wakes its waiters; with `fencingToken`, only while that grant still holds it.
   * Returns what was taken away, or why nothing was.
   */
  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    return this.store.forceRelease(key, fencingToken);
  }
}
