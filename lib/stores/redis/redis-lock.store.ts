import type { Cluster, Redis } from 'ioredis';
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
import { RedisCommands } from './redis-commands.js';
import type { RedisConnection } from './redis-connection.js';
import { RedisKeyLayout } from './redis-key-layout.js';
import { RedisRenewals } from './redis-renewals.js';
import { ReleaseChannel } from './release-channel.js';
import { acquireAcknowledgedScript, acquireScript } from './scripts/acquire.script.js';
import type { RedisClient } from './scripts/define-script.js';
import { forceReleaseScript } from './scripts/force-release.script.js';
import { inspectScript } from './scripts/inspect.script.js';
import { releaseScript } from './scripts/release.script.js';

export interface RedisLockStoreOptions {
  readonly keyPrefix: string;
  /** How long one command may take before its outcome counts as unknown. */
  readonly commandTimeoutMs: number;
  /**
   * Replicas that must acknowledge a grant or renewal (`WAIT`) before it counts: a grant they did not
   * acknowledge in time is released and reported as a store failure, so the waiter retries.
   * @default 0
   */
  readonly replicas?: number;
}

/** The lease protocol on Redis: one shared command connection, one lazily opened subscriber. */
export class RedisLockStore implements LockStore {
  private readonly layout: RedisKeyLayout;
  private readonly channel: ReleaseChannel;
  private readonly commands: RedisCommands;
  private readonly renewals: RedisRenewals;
  private readonly replicas: number;
  /** WAIT's own bound: half the command timeout, so its answer (and the clean-up) comes before ours. */
  private readonly waitTimeoutMs: number;

  constructor(
    private readonly connection: RedisConnection,
    options: RedisLockStoreOptions,
  ) {
    this.layout = new RedisKeyLayout(options.keyPrefix);
    this.channel = new ReleaseChannel(() => connection.openSubscriber(), connection.sharded, options.commandTimeoutMs);
    this.commands = new RedisCommands(connection, options.commandTimeoutMs);
    this.replicas = options.replicas ?? 0;
    this.waitTimeoutMs = Math.max(1, Math.floor(options.commandTimeoutMs / 2));
    this.renewals = new RedisRenewals(connection, this.commands, this.layout, { replicas: this.replicas, waitTimeoutMs: this.waitTimeoutMs });
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const lockKey = this.layout.lockKey(key);
    const fenceKey = this.layout.fenceKey(lockKey);
    // Without an answer (timeout, connection lost), the script may still have run or still run: take the
    // key back if it did. Both calls go down the same connection in order, so the cleanup runs after it.
    let pending: Promise<unknown> | undefined;
    const cleanUp = (): void => {
      this.release(key, token, 0).catch(() => undefined);
      pending?.then((result) => (result as AcquireResult).acquired && this.release(key, token, 0)).catch(() => undefined);
    };
    if (this.replicas === 0) {
      return this.commands.run('acquire', key, lockKey, (client) => (pending = acquireScript(client, lockKey, fenceKey, token, leaseMs, holder)), cleanUp);
    }
    const { result, acknowledged } = await this.commands.run(
      'acquire',
      key,
      lockKey,
      (client) => {
        const sent = acquireAcknowledgedScript(client, lockKey, fenceKey, token, leaseMs, holder, this.replicas, this.waitTimeoutMs);
        pending = sent.then(({ result: granted }) => granted);
        return sent;
      },
      cleanUp,
    );
    if (!result.acquired || acknowledged >= this.replicas) return result;
    // A grant only the primary has would vanish with it: not reported as held (Redisson's synced writes).
    await this.release(key, token, 0).catch(() => undefined);
    const cause = new Error(
      `${this.connection.server(lockKey)} granted the lock, but only ${acknowledged} of ${this.replicas} replica(s) acknowledged it within ${this.waitTimeoutMs} ms; it was released`,
    );
    throw new LockStoreUnavailableError('acquire', key, { cause });
  }

  /**
   * A release that gets 0 ("not ours") after its connection dropped and came back may be ioredis' second
   * delivery of a release that already ran (its reply lost with the connection): then the key is gone
   * because we released it, not because we lost it. That outcome is reported as unknown, never as a loss.
   */
  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const lockKey = this.layout.lockKey(key);
    const epoch = this.connection.epoch;
    const channel = this.layout.releaseChannel(lockKey);
    const released = await this.commands.run('release', key, lockKey, (client) =>
      releaseScript(client, lockKey, token, keepMs, channel, this.connection.sharded),
    );
    if (released || this.connection.epoch === epoch) return released;
    const cause = new Error(
      `the connection to ${this.connection.server(lockKey)} was lost and re-established while the release was in flight; ` +
        'the key was not ours afterwards, which is what a release that ran before its reply was lost also leaves: outcome unknown',
    );
    throw new LockStoreUnavailableError('release', key, { cause });
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return requests.length === 0 ? Promise.resolve([]) : this.renewals.renew(requests);
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    const lockKey = this.layout.lockKey(key);
    try {
      return await this.channel.listen(this.layout.releaseChannel(lockKey), listener);
    } catch (error) {
      throw new LockStoreUnavailableError('subscribe', key, { cause: this.commands.describe(error, lockKey) });
    }
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const lockKey = this.layout.lockKey(key);
    const state = await this.commands.run('inspect', key, lockKey, (client) => inspectScript(client, lockKey));
    return state && { key, ...state };
  }

  async list(match = '*'): Promise<HeldLock[]> {
    const held: HeldLock[] = [];
    const pattern = escapeGlob(this.layout.lockKey('')) + globForRedis(match);
    for (const redisKey of await this.commands.run('list', match, undefined, (client) => scanAll(client, pattern))) {
      const key = this.layout.userKey(redisKey);
      if (key === undefined) continue;
      const state = await this.commands.run('inspect', key, redisKey, (client) => inspectScript(client, redisKey));
      if (state) held.push({ key, ...state });
    }
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const lockKey = this.layout.lockKey(key);
    const channel = this.layout.releaseChannel(lockKey);
    const reply = await this.commands.run('force-release', key, lockKey, (client) =>
      forceReleaseScript(client, lockKey, channel, fencingToken, this.connection.sharded),
    );
    if (!reply) return { released: false, reason: 'not-held' };
    const lock: HeldLock = { key, fencingToken: reply.fencingToken, holder: reply.holder, ttlMs: reply.ttlMs };
    return reply.taken ? { released: true, lock } : { released: false, reason: 'fencing-mismatch', current: lock };
  }

  async ping(): Promise<void> {
    await this.commands.run('ping', '*', undefined, async (client) => {
      await connected(client);
      await Promise.all(primaries(client).map((node) => node.ping()));
    });
  }

  async close(): Promise<void> {
    await this.channel.close();
    await this.connection.close();
  }
}

/** Every primary: a Cluster's masters (once it knows them), or the one server. */
function primaries(client: RedisClient): Redis[] {
  return client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
}

/** A Cluster client that has not connected yet knows no nodes: connect it before asking for them. */
async function connected(client: RedisClient): Promise<void> {
  if (client.isCluster && client.status !== 'ready') await (client as Cluster).ping();
}

/**
 * SCAN, not KEYS, so listing never blocks Redis; on a Cluster every primary is scanned.
 */
async function scanAll(client: RedisClient, pattern: string): Promise<string[]> {
  await connected(client);
  // A single-node client of a Cluster node would list that node's locks only, and look complete. (A
  // service that refuses INFO is taken for what it claims to be.)
  if (!client.isCluster && /^cluster_enabled:1/m.test(await (client as Redis).info('cluster').catch(() => ''))) {
    throw new Error('this server is a Redis Cluster node: listing it alone would miss the other masters’ locks; use a Cluster client');
  }
  const keys: string[] = [];
  for (const node of primaries(client)) {
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
