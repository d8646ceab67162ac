import { randomBytes } from 'node:crypto';
import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { globForRedis } from '../key-glob.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockStore,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { GrantChannel } from './channels/grant-channel.js';
import { connected, escapeGlob, primaries, scanAll } from './connection/redis-nodes.js';
import { RedisCommands, type SentCommand } from './commands/redis-commands.js';
import { RedisFairQueue } from './fair-queue/redis-fair-queue.js';
import type { RedisConnection } from './connection/redis-connection.js';
import { RedisKeyLayout } from './redis-key-layout.js';
import { RedisRenewals } from './renewals/redis-renewals.js';
import { ReleaseChannel } from './channels/release-channel.js';
import { clockMicros } from './client-clock.js';
import { ACQUIRE_QUEUED_KEYS, ACQUIRE_QUEUED_SCRIPT, acquireQueuedArgs, parseSingleAttemptReply } from './scripts/acquire-queued.script.js';
import { ACQUIRE_KEYS, ACQUIRE_SCRIPT, acquireArgs, parseAcquireReply } from './scripts/acquire.script.js';
import type { AcknowledgedReply } from './scripts/define-script.js';
import type { RedisScript } from './scripts/define-script.js';
import { forceReleaseScript } from './scripts/force-release.script.js';
import { inspectScript } from './scripts/inspect.script.js';
import { markWaitedForScript } from './scripts/mark-waited-for.script.js';
import { LOCK_VALUE_SEPARATOR } from './scripts/lock-value.js';
import { RELEASE_KEYS, releaseArgs, releasedReply, releaseScriptFor } from './scripts/release.script.js';

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
  /**
   * Waiters queue in Redis, first come first served across every instance: a release hands the key to
   * the next waiter in the same step and wakes only that one (see fair-queue/redis-fair-queue.ts). Costs an uncontended
   * acquisition one more command inside the server (the look for a queue).
   * @default false
   */
  readonly fair?: boolean;
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
  private readonly releaseScript: RedisScript;
  private readonly grants: GrantChannel;
  /** Present with `fair`: waiting acquisitions go through the store's queue (see `LockStore.acquireQueued`). */
  readonly acquireQueued?: (request: QueuedAcquireRequest) => Promise<QueuedAcquireOutcome>;
  private readonly fair: boolean;
  /** `:<prefix length>:`, the release script's argument after the slot tag. */
  private readonly prefixLengthArg: string;

  constructor(
    private readonly connection: RedisConnection,
    options: RedisLockStoreOptions,
  ) {
    this.layout = new RedisKeyLayout(options.keyPrefix);
    this.channel = new ReleaseChannel(() => connection.openSubscriber(), connection.sharded, connection.closeTimeoutMs);
    this.commands = new RedisCommands(connection, options.commandTimeoutMs);
    this.replicas = options.replicas ?? 0;
    this.waitTimeoutMs = Math.max(1, Math.floor(options.commandTimeoutMs / 2));
    this.renewals = new RedisRenewals(connection, this.commands, this.layout, { replicas: this.replicas, waitTimeoutMs: this.waitTimeoutMs });
    this.releaseScript = releaseScriptFor(connection.sharded);
    this.prefixLengthArg = `:${this.layout.prefixLength}:`;
    const instance = randomBytes(6).toString('hex');
    this.grants = new GrantChannel(this.channel, (tag) => this.layout.grantChannel(tag, instance));
    this.fair = options.fair ?? false;
    if (this.fair) {
      const queue = new RedisFairQueue({
        commands: this.commands,
        layout: this.layout,
        grants: this.grants,
        sharded: connection.sharded,
        instance,
        epoch: () => connection.epoch,
        release: (key, token) => this.release(key, token, 0),
      });
      this.acquireQueued = (request) => {
        if (request.token.includes(LOCK_VALUE_SEPARATOR)) return Promise.reject(tokenError(request.token));
        return queue.acquire(request);
      };
    }
  }

  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    if (token.includes(LOCK_VALUE_SEPARATOR)) return Promise.reject(tokenError(token));
    const lockKey = this.layout.lockKey(key);
    if (this.fair) {
      // A single attempt that respects the queue: while waiters stand in line, it is turned away.
      const { fenceKey, queueKey } = this.layout.queueNames(lockKey);
      const args = acquireQueuedArgs(lockKey, fenceKey, queueKey, token, leaseMs, holder, clockMicros(), '');
      return this.commands.runScript('acquire', key, lockKey, ACQUIRE_QUEUED_SCRIPT, ACQUIRE_QUEUED_KEYS, args, parseSingleAttemptReply, this.cleanUpAcquire);
    }
    const args = acquireArgs(lockKey, this.layout.fenceKey(lockKey), token, leaseMs, holder, clockMicros());
    if (this.replicas > 0) return this.acquireAcknowledged(key, lockKey, args);
    return this.commands.runScript('acquire', key, lockKey, ACQUIRE_SCRIPT, ACQUIRE_KEYS, args, parseAcquireReply, this.cleanUpAcquire);
  }

  /**
   * Without an answer (timeout, connection lost), the script may still have run or still run: take the
   * key back if it did. Both calls go down the same connection in order, so the clean-up runs after it; and
   * should the reply still come, a grant in it is released too. One function for every acquisition.
   */
  private readonly cleanUpAcquire = (call: SentCommand): void => {
    const token = call.args![this.fair ? ACQUIRE_QUEUED_KEYS : ACQUIRE_KEYS] as string;
    this.release(call.key, token, 0).catch(ignore);
    call.reply.then((reply) => parseAcquireReply(reply).acquired && this.release(call.key, token, 0)).catch(ignore);
  };

  private async acquireAcknowledged(key: string, lockKey: string, args: (string | number)[]): Promise<AcquireResult> {
    const keys = args.slice(0, ACQUIRE_KEYS) as string[];
    const { reply, acknowledged } = await this.commands.run(
      'acquire',
      key,
      lockKey,
      (client) => ACQUIRE_SCRIPT.runAcknowledged(client, keys, args.slice(ACQUIRE_KEYS), this.replicas, this.waitTimeoutMs),
      (call) => this.cleanUpAcquire({ ...call, args, reply: call.reply.then((sent) => (sent as AcknowledgedReply).reply) }),
    );
    const result = parseAcquireReply(reply);
    if (!result.acquired || acknowledged >= this.replicas) return result;
    // A grant only the primary has would vanish with it: not reported as held (Redisson's synced writes).
    await this.release(key, args[ACQUIRE_KEYS] as string, 0).catch(ignore);
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
  release(key: string, token: string, keepMs: number): Promise<boolean> {
    const lockKey = this.layout.lockKey(key);
    const args = releaseArgs(lockKey, token, keepMs, this.layout.slotTag(lockKey) + this.prefixLengthArg, clockMicros());
    return this.commands.runScript('release', key, lockKey, this.releaseScript, RELEASE_KEYS, args, this.releasedOrUnknown);
  }

  private readonly releasedOrUnknown = (reply: unknown, call: SentCommand): boolean => {
    const released = releasedReply(reply);
    if (released || this.connection.epoch === call.epoch) return released;
    const cause = new Error(
      `the connection to ${this.connection.server(this.layout.lockKey(call.key))} was lost and re-established while the release was in flight; ` +
        'the key was not ours afterwards, which is what a release that ran before its reply was lost also leaves: outcome unknown',
    );
    throw new LockStoreUnavailableError('release', call.key, { cause });
  };

  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return requests.length === 0 ? Promise.resolve([]) : this.renewals.renew(requests);
  }

  /**
   * Subscribes, then marks the current holder's value as waited for: releases announce themselves only
   * when marked (see scripts/lock-value.ts), so the common, unwaited release costs no PUBLISH. Later holders
   * are marked by the acquire attempts they turn away, which is how every waiter retries.
   */
  async onRelease(key: string, listener: () => void): Promise<() => void> {
    const lockKey = this.layout.lockKey(key);
    let stop: (() => void) | undefined;
    try {
      stop = await this.channel.listen(this.layout.releaseChannel(lockKey), listener);
      await this.commands.run('subscribe', key, lockKey, (client) => markWaitedForScript(client, lockKey));
      return stop;
    } catch (error) {
      stop?.();
      if (error instanceof LockStoreUnavailableError) throw error;
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
    const call = {
      lockKey,
      fencingToken,
      slotTag: this.layout.slotTag(lockKey),
      prefixLength: this.layout.prefixLength,
      sharded: this.connection.sharded,
    };
    const reply = await this.commands.run('force-release', key, lockKey, (client) => forceReleaseScript(client, call));
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
    this.grants.close();
    await this.channel.close();
    await this.connection.close();
    this.commands.close();
  }
}

/** Tokens are written into the lock value between separators (see scripts/lock-value.ts). */
function tokenError(token: string): Error {
  return new TypeError(`An ownership token must not contain "${LOCK_VALUE_SEPARATOR}" (got one of ${token.length} characters).`);
}

function ignore(): void {}
