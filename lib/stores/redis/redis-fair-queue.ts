import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import { clockMicros } from './client-clock.js';
import type { GrantChannel, GrantListener } from './grant-channel.js';
import type { RedisCommands, SentCommand } from './redis-commands.js';
import type { RedisKeyLayout } from './redis-key-layout.js';
import { ACQUIRE_QUEUED_KEYS, ACQUIRE_QUEUED_SCRIPT, acquireQueuedArgs, parseQueuedReply } from './scripts/acquire-queued.script.js';
import type { RedisScript } from './scripts/define-script.js';
import { parseQueueCheckReply, QUEUE_CHECK_KEYS, queueCheckArgs, queueCheckScriptFor } from './scripts/queue-check.script.js';
import { parseQueueLeaveReply, QUEUE_LEAVE_KEYS, queueLeaveArgs, queueLeaveScriptFor } from './scripts/queue-leave.script.js';

/**
 * A waiter's heartbeat lease: a waiter that died stands in line (or holds a key handed to it) no longer
 * than this, plus one heartbeat of the waiter behind it. Shorter leases use their own length.
 */
export const QUEUE_HEARTBEAT_MS = 2_000;
/** Retries after a store error: exponential from here, with jitter, capped at MAX_RETRY_MS. */
const MIN_RETRY_MS = 25;
const MAX_RETRY_MS = 1_000;

/** What the queue needs from its store. */
export interface FairQueueContext {
  readonly commands: RedisCommands;
  readonly layout: RedisKeyLayout;
  readonly grants: GrantChannel;
  readonly sharded: boolean;
  /** This store's name on the grant channels. */
  readonly instance: string;
  /** `RedisConnection.epoch`: a reply in another epoch than its call may answer a second delivery. */
  epoch(): number;
  /** The store's token-checked release (it hands the key on). */
  release(key: string, token: string): Promise<unknown>;
}

/**
 * The fair wait on Redis (see scripts/queue.lua.ts for the data): a waiter that finds the key taken joins
 * the key's queue in the same call, and from then on is told, and only it, when the key is handed to it.
 * Like etcd's mutex and ZooKeeper's lock recipe, a release wakes exactly one waiter; unlike them the
 * hand-off is done by the releasing script itself, so the next holder owns the key before it even hears of
 * it: no second round trip, no race to lose. Like Redisson's fair lock, every waiter carries a deadline (its
 * heartbeat lease, renewed by a look at the queue every third of it), and a waiter past it is dropped
 * wherever it is met.
 */
export class RedisFairQueue {
  private waiters = 0;
  /** @internal */
  readonly checkScript: RedisScript;
  /** @internal */
  readonly leaveScript: RedisScript;
  /**
   * Lock keys this instance last found queued for, most recent last: a waiter for one of them joins with a
   * plain `RPUSHX` (one command instead of a script call that runs it), and only when no queue turns out to
   * be there makes the full attempt. A key last seen free is taken off.
   */
  private readonly contended = new Map<string, true>();

  constructor(readonly context: FairQueueContext) {
    this.checkScript = queueCheckScriptFor(context.sharded);
    this.leaveScript = queueLeaveScriptFor(context.sharded);
  }

  acquire(request: QueuedAcquireRequest): Promise<QueuedAcquireOutcome> {
    return new QueueWait(this, request, (++this.waiters).toString(36)).run();
  }

  /** @internal */
  seenContended(lockKey: string): boolean {
    return this.contended.has(lockKey);
  }

  /** @internal */
  noteContended(lockKey: string, contended: boolean): void {
    this.contended.delete(lockKey);
    if (!contended) return;
    this.contended.set(lockKey, true);
    if (this.contended.size > MAX_CONTENDED_KEYS) this.contended.delete(this.contended.keys().next().value!);
  }
}

/** Bounds the memory of {@link RedisFairQueue}'s contended keys. */
const MAX_CONTENDED_KEYS = 1_000;

/** One acquisition's wait in one key's queue. */
class QueueWait implements GrantListener {
  private readonly lockKey: string;
  private readonly fenceKey: string;
  private readonly queueKey: string;
  private readonly tag: string;
  private readonly grantChannelBase: string;
  private readonly heartbeatMs: number;
  private readonly wake = new Wake();
  private attempts = 0;
  private failures = 0;
  private lastError?: LockStoreUnavailableError;
  /** In the queue (as far as we know). */
  private queued = false;
  private subscribed = false;
  /** Send time of the latest call that found us waiting: a hand-off came later. */
  private lastQueuedAt = 0;
  private nextCheckAt = Infinity;
  /** Set by the grant channel: the key was handed to us. */
  private handedFence?: number;

  private readonly context: FairQueueContext;

  constructor(
    private readonly queue: RedisFairQueue,
    private readonly request: QueuedAcquireRequest,
    private readonly id: string,
  ) {
    const context = (this.context = queue.context);
    const { layout } = context;
    this.lockKey = layout.lockKey(request.key);
    this.tag = layout.slotTag(this.lockKey);
    this.fenceKey = layout.fenceKeyOfTag(this.tag);
    this.queueKey = layout.queueKey(this.lockKey);
    this.grantChannelBase = layout.grantChannel(this.tag, '');
    this.heartbeatMs = Math.min(request.leaseMs, QUEUE_HEARTBEAT_MS);
  }

  granted(fencingToken: number): void {
    this.handedFence = fencingToken;
    this.wake.fire();
  }

  recheck(delayMs: number): void {
    this.nextCheckAt = Math.min(this.nextCheckAt, Date.now() + delayMs + 1);
    this.wake.fire();
  }

  async run(): Promise<QueuedAcquireOutcome> {
    const { key, token, signal } = this.request;
    const { grants } = this.context;
    // Registered before the first call: a hand-off right after it is announced before its reply arrives.
    grants.register(this.id, this);
    try {
      const outcome = await this.wait();
      if (outcome.result.acquired && signal?.aborted) {
        // A grant that raced the abort is released (which hands the key on).
        await this.context.release(key, token).catch(() => undefined);
        signal.throwIfAborted();
      }
      return outcome;
    } catch (error) {
      // Aborted (the caller, shutdown), or a failure that is not the store's: the place is given up, and a
      // grant that raced it is released.
      if (this.queued || this.handedFence !== undefined) await this.abandon();
      throw error;
    } finally {
      grants.unregister(this.id);
      if (this.subscribed) grants.unsubscribe(this.tag);
    }
  }

  private async wait(): Promise<QueuedAcquireOutcome> {
    const { deadline, signal } = this.request;
    for (;;) {
      signal?.throwIfAborted();
      // The first pass always runs, however close the deadline: one full attempt, as a plain acquire makes.
      if (this.attempts > 0 && Date.now() >= deadline) return await this.leaveAtDeadline();
      if (!this.queued) {
        const joined = await this.join();
        if (joined) return joined;
        if (!this.queued) {
          await this.wake.wait(Math.min(deadline, Date.now() + this.backoffMs()), signal);
          continue;
        }
      }
      const waited = await this.waitInLine();
      if (waited) return waited;
    }
  }

  /** Grant, or a place at the end of the line (`queued`); undefined after a store error. */
  private async join(): Promise<QueuedAcquireOutcome | undefined> {
    const { key, token, leaseMs, holder } = this.request;
    const { commands } = this.context;
    const sentAt = Date.now();
    const epoch = this.context.epoch();
    const entry = this.entry(sentAt);
    this.attempts++;
    try {
      // Where a queue stood last time, a plain RPUSHX joins it (it joins nothing if there is none).
      const joinedQueue =
        this.queue.seenContended(this.lockKey) &&
        (await commands.run('acquire', key, this.lockKey, (client) => client.rpushx(this.queueKey, entry), this.cleanUpJoin)) > 0;
      if (!joinedQueue) {
        const args = acquireQueuedArgs(this.lockKey, this.fenceKey, this.queueKey, token, leaseMs, holder, clockMicros(), entry);
        const reply = await commands.runScript('acquire', key, this.lockKey, ACQUIRE_QUEUED_SCRIPT, ACQUIRE_QUEUED_KEYS, args, parseQueuedReply, this.cleanUpJoin);
        this.queue.noteContended(this.lockKey, !reply.granted);
        if (reply.granted) {
          this.failures = 0;
          this.lastError = undefined;
          return this.outcome(reply.fencingToken, sentAt, undefined);
        }
      }
    } catch (error) {
      this.failed(error);
      return undefined;
    }
    this.failures = 0;
    this.lastError = undefined;
    this.queued = true;
    this.lastQueuedAt = sentAt;
    // A reply in another connection epoch may answer a second delivery: look at the queue at once (the
    // check finds a grant and drops a duplicate entry).
    this.nextCheckAt = this.context.epoch() === epoch ? sentAt + this.checkEveryMs() : 0;
    return undefined;
  }

  /** Until granted (or the deadline); undefined when our place was lost and we must join again. */
  private async waitInLine(): Promise<QueuedAcquireOutcome | undefined> {
    const { deadline, signal } = this.request;
    if (!this.subscribed) {
      this.subscribed = true;
      try {
        const subscribedAt = await this.context.grants.subscribe(this.tag);
        // Subscribed only now: a hand-off may have been announced before anyone listened.
        if (subscribedAt > this.lastQueuedAt) this.nextCheckAt = 0;
      } catch {
        // No grant channel: the waiter still gets the key, by its own looks at the queue.
      }
    }
    for (;;) {
      if (this.handedFence !== undefined) return this.outcome(this.handedFence, this.lastQueuedAt, this.heartbeatMs);
      signal?.throwIfAborted();
      const now = Date.now();
      if (now >= deadline) return this.leaveAtDeadline();
      if (now >= this.nextCheckAt) {
        const checked = await this.check();
        if (checked === 'gone') return undefined;
        if (checked) return checked;
        continue;
      }
      await this.wake.wait(Math.min(deadline, this.nextCheckAt), signal);
    }
  }

  private async check(): Promise<QueuedAcquireOutcome | 'gone' | undefined> {
    const { key, token, leaseMs } = this.request;
    const sentAt = Date.now();
    this.attempts++;
    const args = queueCheckArgs(this.lockKey, this.fenceKey, this.queueKey, token, this.entry(sentAt), clockMicros(), leaseMs, this.grantChannelBase);
    let reply;
    try {
      reply = await this.context.commands.runScript('acquire', key, this.lockKey, this.queue.checkScript, QUEUE_CHECK_KEYS, args, parseQueueCheckReply);
    } catch (error) {
      this.failed(error);
      this.nextCheckAt = Date.now() + this.backoffMs();
      return undefined;
    }
    this.failures = 0;
    this.lastError = undefined;
    if (reply.status === 'granted') {
      return reply.now ? this.outcome(reply.fencingToken, sentAt, undefined) : this.outcome(reply.fencingToken, this.lastQueuedAt, this.heartbeatMs);
    }
    if (reply.status === 'gone') {
      this.queued = false;
      return 'gone';
    }
    this.lastQueuedAt = sentAt;
    this.nextCheckAt = sentAt + this.checkEveryMs();
    // First in line: look again when the holder's TTL runs out (a holder that died releases nothing).
    if (reply.position === 1 && reply.holderTtlMs >= 0) this.nextCheckAt = Math.min(this.nextCheckAt, Date.now() + reply.holderTtlMs + 1);
    return undefined;
  }

  /** At the deadline: out of the queue; a hand-off that came first is kept (it is a grant within the wait). */
  private async leaveAtDeadline(): Promise<QueuedAcquireOutcome> {
    if (this.handedFence !== undefined) return this.outcome(this.handedFence, this.lastQueuedAt, this.heartbeatMs);
    if (this.queued) {
      let fence: number | undefined;
      try {
        fence = await this.leave();
      } catch (error) {
        void this.abandon();
        throw error;
      }
      this.queued = false;
      if (fence !== undefined) return this.outcome(fence, this.lastQueuedAt, this.heartbeatMs);
    }
    if (this.lastError) throw this.lastError;
    return { result: { acquired: false, ttlMs: -1 }, attempts: this.attempts, leaseStartedAt: Date.now() };
  }

  /** Out of the queue, and the key released if it was handed to us meanwhile; failures are the store's to outlive. */
  private async abandon(): Promise<void> {
    this.queued = false;
    const fence = this.handedFence ?? (await this.leave().catch(() => undefined));
    if (fence !== undefined) await this.context.release(this.request.key, this.request.token).catch(() => undefined);
  }

  /** Removes our entries; the fencing token if the key was handed to us meanwhile. */
  private leave(): Promise<number | undefined> {
    const args = queueLeaveArgs(this.lockKey, this.fenceKey, this.queueKey, this.request.token, clockMicros(), this.grantChannelBase);
    return this.context.commands.runScript('acquire', this.request.key, this.lockKey, this.queue.leaveScript, QUEUE_LEAVE_KEYS, args, parseQueueLeaveReply);
  }

  /**
   * A join whose outcome is unknown may have queued us, or granted us the key: both are undone (in order,
   * on the same connection, before any retry), so the retry starts clean.
   */
  private readonly cleanUpJoin = (_call: SentCommand): void => {
    void this.leave()
      .then((fence) => (fence === undefined ? undefined : this.context.release(this.request.key, this.request.token)))
      .catch(() => undefined);
  };

  private failed(error: unknown): void {
    if (!(error instanceof LockStoreUnavailableError)) throw error;
    this.lastError = error;
    this.failures++;
  }

  private outcome(fencingToken: number, leaseStartedAt: number, grantedTtlMs: number | undefined): QueuedAcquireOutcome {
    this.queued = false;
    this.handedFence = undefined;
    return { result: { acquired: true, fencingToken }, attempts: this.attempts, leaseStartedAt, ...(grantedTtlMs === undefined ? {} : { grantedTtlMs }) };
  }

  /** Our queue entry with a heartbeat deadline counted from `sentAt` (see scripts/queue.lua.ts). */
  private entry(sentAt: number): string {
    const { token, holder } = this.request;
    return `${sentAt + this.heartbeatMs}|${this.heartbeatMs}|${this.context.instance}|${this.id}|${token}|${holder}`;
  }

  private checkEveryMs(): number {
    return Math.max(1, Math.floor(this.heartbeatMs / 3));
  }

  private backoffMs(): number {
    return Math.random() * Math.min(MAX_RETRY_MS, MIN_RETRY_MS * 2 ** this.failures);
  }
}
