import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { globForRedis } from '../key-glob.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockStore,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import type { Cluster, Redis } from 'ioredis';
import { closeRedisClient, type RedisConnection } from './redis-client.factory.js';
import type { RedisClient } from './scripts/define-script.js';
import { RedisKeyLayout } from './redis-key-layout.js';
import { ReleaseChannel } from './release-channel.js';
import { acquireScript } from './scripts/acquire.script.js';
import { forceReleaseScript } from './scripts/force-release.script.js';
import { inspectScript } from './scripts/inspect.script.js';
import { releaseScript } from './scripts/release.script.js';
import { renewManyScript, type RenewEntry } from './scripts/renew-many.script.js';

export interface RedisLockStoreOptions {
  readonly keyPrefix: string;
  /** How long one command may take before its outcome counts as unknown. */
  readonly commandTimeoutMs: number;
}

/** Keeps one renew call's argument list well below Redis' limits and its run time short. */
const MAX_RENEW_BATCH = 1000;

/** The lease protocol on Redis: one shared command connection, one lazily opened subscriber. */
export class RedisLockStore implements LockStore {
  private readonly layout: RedisKeyLayout;
  private readonly channel: ReleaseChannel;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: RedisLockStoreOptions,
  ) {
    this.layout = new RedisKeyLayout(options.keyPrefix);
    this.channel = new ReleaseChannel(connection.openSubscriber);
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const lockKey = this.layout.lockKey(key);
    const pending = acquireScript(this.connection.client, lockKey, this.layout.fenceKey(lockKey), token, leaseMs, holder);
    // Without an answer (timeout, connection lost), the script may still have run or still run: take the
    // key back if it did. Both calls go down the same connection in order, so the cleanup runs after it.
    const cleanUp = (): void => {
      this.release(key, token, 0).catch(() => undefined);
      pending.then((result) => result.acquired && this.release(key, token, 0)).catch(() => undefined);
    };
    return this.call('acquire', key, pending, cleanUp);
  }

  release(key: string, token: string, keepMs: number): Promise<boolean> {
    const pending = releaseScript(
      this.connection.client,
      this.layout.lockKey(key),
      token,
      keepMs,
      this.layout.releaseChannel(key),
    );
    return this.call('release', key, pending);
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    if (requests.length === 0) return [];
    const batches = this.batch(requests.map((request, index) => ({ index, lockKey: this.layout.lockKey(request.key), ...request })));
    const results = new Array<RenewOutcome>(requests.length);
    // Each batch stands alone: a batch whose node fails leaves its own requests unknown, never the others'.
    await Promise.all(
      batches.map(async (batch) => {
        try {
          const renewed = await this.call('renew', describeBatch(batch), renewManyScript(this.connection.client, batch));
          batch.forEach((entry, i) => (results[entry.index] = renewed[i]!));
        } catch (error) {
          for (const entry of batch) results[entry.index] = error as Error;
        }
      }),
    );
    return results;
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    try {
      return await this.channel.listen(this.layout.releaseChannel(key), listener);
    } catch (error) {
      throw new LockStoreUnavailableError('subscribe', key, { cause: error });
    }
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const state = await this.call('inspect', key, inspectScript(this.connection.client, this.layout.lockKey(key)));
    return state && { key, ...state };
  }

  async list(match = '*'): Promise<HeldLock[]> {
    const held: HeldLock[] = [];
    const pattern = escapeGlob(this.layout.lockKey('')) + globForRedis(match);
    for (const redisKey of await this.call('list', match, scanAll(this.connection.client, pattern))) {
      const key = this.layout.userKey(redisKey);
      if (key === undefined) continue;
      const state = await this.call('inspect', key, inspectScript(this.connection.client, redisKey));
      if (state) held.push({ key, ...state });
    }
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const reply = await this.call(
      'force-release',
      key,
      forceReleaseScript(this.connection.client, this.layout.lockKey(key), this.layout.releaseChannel(key), fencingToken),
    );
    if (!reply) return { released: false, reason: 'not-held' };
    const lock: HeldLock = { key, fencingToken: reply.fencingToken, holder: reply.holder, ttlMs: reply.ttlMs };
    return reply.taken ? { released: true, lock } : { released: false, reason: 'fencing-mismatch', current: lock };
  }

  async ping(): Promise<void> {
    const client = this.connection.client;
    const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client];
    await this.call('ping', '*', Promise.all(nodes.map((node) => node.ping())));
  }

  async close(): Promise<void> {
    await this.channel.close();
    if (this.connection.owned) await closeRedisClient(this.connection.client);
  }

  /** Cluster scripts may only touch one hash slot, so a cluster batch never mixes slots. */
  private batch<T extends RenewEntry>(entries: T[]): T[][] {
    const groups = new Map<number, T[]>();
    const clustered = this.connection.client.isCluster;
    for (const entry of entries) {
      const group = clustered ? this.layout.slotOf(entry.lockKey) : 0;
      const list = groups.get(group) ?? [];
      list.push(entry);
      groups.set(group, list);
    }
    const batches: T[][] = [];
    for (const list of groups.values()) {
      for (let i = 0; i < list.length; i += MAX_RENEW_BATCH) batches.push(list.slice(i, i + MAX_RENEW_BATCH));
    }
    return batches;
  }

  private call<T>(operation: string, key: string, pending: Promise<T>, onUnknownOutcome?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        onUnknownOutcome?.();
        reject(
          new LockStoreUnavailableError(operation, key, {
            cause: new Error(`no answer within ${this.options.commandTimeoutMs} ms`),
          }),
        );
      }, this.options.commandTimeoutMs);
      timer.unref();
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          // A reply error means Redis answered (the script did not run); anything else may have run.
          if (!isReplyError(error)) onUnknownOutcome?.();
          reject(new LockStoreUnavailableError(operation, key, { cause: withoutCommand(error) }));
        },
      );
    });
  }
}

/** SCAN, not KEYS, so listing never blocks Redis; on a Cluster every primary is scanned. */
async function scanAll(client: RedisClient, pattern: string): Promise<string[]> {
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
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

/** The key prefix is literal text; only the operator's `match` is a glob. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

function describeBatch(batch: readonly RenewEntry[]): string {
  return `${batch.length} lease(s) starting with ${batch[0]!.lockKey}`;
}

function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

/**
 * ioredis attaches the failed command, arguments included, to its errors; for our scripts those arguments
 * are ownership tokens. Causes keep only what the command was and what went wrong.
 */
function withoutCommand(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const clean = new Error(error.message);
  clean.name = error.name;
  return clean;
}
