import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../../lock-store.interface.js';
import type { GrantChannel } from '../channels/grant-channel.js';
import type { RedisCommands } from '../commands/redis-commands.js';
import type { RedisKeyLayout } from '../redis-key-layout.js';
import { QueueWait } from './redis-queue-wait.js';
import type { RedisScript } from '../scripts/define-script.js';
import { queueCheckScriptFor } from '../scripts/queue-check.script.js';
import { queueLeaveScriptFor } from '../scripts/queue-leave.script.js';


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
    return new QueueWait(this, request, ++this.waiters).run();
  }

  /** @internal */
  seenContended(lockKey: string): boolean {
    return this.contended.has(lockKey);
  }

  /** @internal */
  noteContended(lockKey: string, contended: boolean): void {
    if (!contended) {
      if (this.contended.size > 0) this.contended.delete(lockKey);
      return;
    }
    this.contended.delete(lockKey);
    this.contended.set(lockKey, true);
    if (this.contended.size > MAX_CONTENDED_KEYS) this.contended.delete(this.contended.keys().next().value!);
  }
}

/** Bounds the memory of {@link RedisFairQueue}'s contended keys. */
const MAX_CONTENDED_KEYS = 1_000;

