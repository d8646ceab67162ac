import { randomBytes } from 'node:crypto';
import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { globForRedis } from '../key-glob.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockShape,
  LockStore,
  PrefixSurvey,
  PrefixSurveyLimits,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { AcknowledgedGrants } from './acknowledged-grants.js';
import { GrantChannel } from './channels/grant-channel.js';
import { ReleaseChannel } from './channels/release-channel.js';
import { RedisCommands } from './commands/redis-commands.js';
import { checkWaitAllowed } from './commands/wait-allowed.check.js';
import type { RedisConnection } from './connection/redis-connection.js';
import { connected, escapeGlob, primaries, scanAll } from './connection/redis-nodes.js';
import { RedisFairQueue } from './fair-queue/redis-fair-queue.js';
import { clockMicros } from './client-clock.js';
import { heldUnderOtherPrefixes } from './prefix-survey.js';
import { RedisKeyLayout } from './redis-key-layout.js';
import { RedisSingleAttempts, tokenError } from './redis-single-attempts.js';
import { RedisRenewals } from './renewals/redis-renewals.js';
import { FORCE_RELEASE_SCRIPT } from './scripts/force-release.script.js';
import { INSPECT_SCRIPT } from './scripts/inspect.script.js';
import { INSPECT_SHARED_SCRIPT } from './scripts/inspect-shared.script.js';
import { MARK_WAITED_FOR_SCRIPT } from './scripts/mark-waited-for.script.js';
import { withParse, type RedisScript, type SentScript } from './scripts/redis-script.js';
import { LOCK_VALUE_SEPARATOR } from './scripts/lock-value.js';
import { RELEASE_SCRIPT, type ReleaseInput } from './scripts/release.script.js';

export interface RedisLockStoreOptions {
  readonly keyPrefix: string;
  /** How long one command may take before its outcome counts as unknown. */
  readonly commandTimeoutMs: number;
  /**
   * Replicas that must acknowledge a grant or renewal (`WAIT`) before it counts: a grant they did not
   * acknowledge in time is released and reported as a store failure, so the waiter retries. With a queue,
   * every grant of the queue too, however its waiter learnt of it (see acknowledged-grants.ts).
   * @default 0
   */
  readonly replicas?: number;
  /**
   * A plain lock's waiters queue in Redis, first come first served across every instance: a release hands
   * the key to the next waiter in the same step and wakes only that one (see fair-queue/redis-fair-queue.ts).
   * Single attempts stay the plain one (the key alone), so one may take a key that came free by expiry
   * ahead of the line. Otherwise waiters retry on release notifications.
   * @default true
   */
  readonly queue?: boolean;
  /**
   * Strict: beyond `queue`, a single attempt is turned away while anybody stands in line, and waiters of
   * every shape queue too. Costs an uncontended acquisition one more command inside the server (the look
   * for a queue).
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
  /** The release script, its reply read with the connection's epoch (see {@link release}). */
  private readonly releaseScript: RedisScript<ReleaseInput, boolean>;
  private readonly grants: GrantChannel;
  /** Present with `queue` or `fair`: waiting acquisitions go through the store's queue (see `LockStore.acquireQueued`). */
  readonly acquireQueued?: (request: QueuedAcquireRequest) => Promise<QueuedAcquireOutcome>;
  /** Present with `queue` or `fair`: false for a key not found queued lately (see `LockStore.queuesAtOnce`). */
  readonly queuesAtOnce?: (key: string) => boolean;
  /**
   * With `queue` but not `fair`: an application's first waiter for a key stands in the line, the others
   * behind it in the application (see `LockStore.queuesLocalHeads`). Every waiter in line looks at the whole
   * line every third of its heartbeat, so a line of every waiter would cost Redis the square of their
   * number; one entry per instance keeps it to the instances. `fair` keeps every waiter in line (strict
   * arrival order across all of them), at that cost.
   */
  readonly queuesLocalHeads: boolean = false;
  /**
   * Present with `fair`: waiters of every shape (readers, writers, permits) queue too, in the key's queue of
   * shaped waiters (see `LockStore.acquireSharedQueued`; no `queuesShape`: every shape does).
   */
  readonly acquireSharedQueued?: (request: QueuedAcquireRequest, shape: LockShape) => Promise<QueuedAcquireOutcome>;
  /** `acquire` and `acquireShared`: one attempt each. */
  private readonly attempts: RedisSingleAttempts;
  /** `:<prefix length>:`, the release script's argument after the slot tag. */
  private readonly prefixLengthArg: string;

  constructor(
    private readonly connection: RedisConnection,
    options: RedisLockStoreOptions,
  ) {
    this.layout = new RedisKeyLayout(options.keyPrefix);
    this.channel = new ReleaseChannel(() => connection.openSubscriber(), connection.sharded, connection.closeTimeoutMs);
    this.commands = new RedisCommands(connection, options.commandTimeoutMs, options.replicas ?? 0);
    this.renewals = new RedisRenewals(connection, this.commands, this.layout);
    this.releaseScript = withParse(RELEASE_SCRIPT, this.releasedOrUnknown);
    this.prefixLengthArg = `:${this.layout.prefixLength}:`;
    const instance = randomBytes(6).toString('hex');
    this.grants = new GrantChannel(this.channel, (tag) => this.layout.grantChannel(tag, instance));
    const fair = options.fair ?? false;
    const acknowledged = this.commands.acknowledgement && new AcknowledgedGrants(connection, this.commands, this.layout, (key, token) => this.release(key, token, 0));
    this.attempts = new RedisSingleAttempts(this.commands, this.layout, fair, acknowledged, (key, token, keepMs) => this.release(key, token, keepMs));
    if (fair || (options.queue ?? true)) {
      const queue = new RedisFairQueue({
        commands: this.commands,
        layout: this.layout,
        grants: this.grants,
        instance,
        epoch: () => connection.epoch,
        release: (key, token) => this.release(key, token, 0),
        acknowledged,
      });
      this.acquireQueued = (request) => withToken(request.token, () => queue.acquire(request));
      // Its plain attempt is turned away while the key is held (and with `fair`, while a waiter stands in
      // line, by ACQUIRE_IF_NO_QUEUE_SCRIPT): turned away, the waiter joins the line.
      this.queuesAtOnce = (key) => queue.foundQueued(this.layout.lockKey(key));
      // Shaped waiters only with `fair`: a reader's plain attempt is granted beside other readers, so with
      // plain attempts in front of it a line would not keep a waiting writer from being overtaken.
      if (fair) this.acquireSharedQueued = (request, shape) => withToken(request.token, () => queue.acquireShared(request, shape));
      else this.queuesLocalHeads = true;
    }
  }

  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    return this.attempts.acquire(key, token, leaseMs, holder);
  }

  /** Read/write locks and semaphores (see redis-single-attempts.ts, scripts/shared-hold.lua.ts). */
  acquireShared(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    return this.attempts.acquireShared(key, shape, token, leaseMs, holder);
  }

  /**
   * A release that gets 0 ("not ours") after its connection dropped and came back may be ioredis' second
   * delivery of a release that already ran (its reply lost with the connection): then the key is gone
   * because we released it, not because we lost it. That outcome is reported as unknown, never as a loss.
   */
  release(key: string, token: string, keepMs: number): Promise<boolean> {
    const lockKey = this.layout.lockKey(key);
    const input: ReleaseInput = { lockKey, token, keepMs, slotTagAndPrefix: this.layout.slotTag(lockKey) + this.prefixLengthArg, clockMicros: clockMicros() };
    return this.commands.runScript('release', key, this.releaseScript, input);
  }

  private readonly releasedOrUnknown = (reply: unknown, call: SentScript<ReleaseInput>): boolean => {
    const released = RELEASE_SCRIPT.parse(reply, call);
    if (released || this.connection.epoch === call.epoch) return released;
    const cause = new Error(
      `the connection to ${this.connection.server(call.input.lockKey)} was lost and re-established while the release was in flight; ` +
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
      await this.commands.runScript('subscribe', key, MARK_WAITED_FOR_SCRIPT, { lockKey });
      return stop;
    } catch (error) {
      stop?.();
      if (error instanceof LockStoreUnavailableError) throw error;
      throw new LockStoreUnavailableError('subscribe', key, { cause: this.commands.describe(error, lockKey) });
    }
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const lockKey = this.layout.lockKey(key);
    const state = await this.commands.runScript('inspect', key, INSPECT_SCRIPT, { lockKey });
    if (state) return { key, ...state };
    // Not a plain lock: perhaps a read/write lock or a semaphore (the runbook's path, not a hot one).
    const [first] = await this.commands.runScript('inspect', key, INSPECT_SHARED_SCRIPT, { lockKey });
    return first ? { key, ...first } : null;
  }

  async list(match = '*'): Promise<HeldLock[]> {
    const held: HeldLock[] = [];
    const pattern = escapeGlob(this.layout.lockKey('')) + globForRedis(match);
    for (const redisKey of await this.commands.run('list', match, undefined, (client) => scanAll(client, pattern))) {
      const key = this.layout.userKey(redisKey);
      if (key === undefined) continue;
      const state = await this.commands.runScript('inspect', key, INSPECT_SCRIPT, { lockKey: redisKey });
      if (state) held.push({ key, ...state });
      else for (const hold of await this.commands.runScript('inspect', key, INSPECT_SHARED_SCRIPT, { lockKey: redisKey })) held.push({ key, ...hold });
    }
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  heldUnderOtherPrefixes(limits?: PrefixSurveyLimits): Promise<PrefixSurvey> {
    return heldUnderOtherPrefixes(this.commands, this.layout.lockKey(''), limits);
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const lockKey = this.layout.lockKey(key);
    const input = { lockKey, fencingToken, slotTag: this.layout.slotTag(lockKey), prefixLength: this.layout.prefixLength };
    const reply = await this.commands.runScript('force-release', key, FORCE_RELEASE_SCRIPT, input);
    if (!reply) return { released: false, reason: 'not-held' };
    const lock: HeldLock = { key, fencingToken: reply.fencingToken, holder: reply.holder, ttlMs: reply.ttlMs };
    return reply.taken ? { released: true, lock } : { released: false, reason: 'fencing-mismatch', current: lock };
  }

  /** With `replicas`, whether the server takes WAIT: asked at startup (see commands/wait-allowed.check.ts). */
  checkAcknowledgements(): Promise<void> {
    return checkWaitAllowed(this.commands);
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

/** The queued acquisitions' token check (the plain and shaped single attempts make it inline: the hot path). */
function withToken<T>(token: string, call: () => Promise<T>): Promise<T> {
  return token === '' || token.includes(LOCK_VALUE_SEPARATOR) ? Promise.reject(tokenError(token)) : call();
}

