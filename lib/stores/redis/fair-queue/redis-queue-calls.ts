import type { QueuedAcquireRequest } from '../../lock-store.interface.js';
import { clockMicros } from '../client-clock.js';
import type { SentCommand } from '../commands/redis-commands.js';
import type { RedisScript } from '../scripts/define-script.js';
import { ACQUIRE_QUEUED_KEYS, ACQUIRE_QUEUED_SCRIPT, acquireQueuedArgs, parseQueuedReply, type QueuedReply } from '../scripts/acquire-queued.script.js';
import { parseQueueCheckReply, QUEUE_CHECK_KEYS, queueCheckArgs, queueCheckScriptFor, type QueueCheckReply } from '../scripts/queue-check.script.js';
import { parseQueueLeaveReply, QUEUE_LEAVE_KEYS, queueLeaveArgs, queueLeaveScriptFor } from '../scripts/queue-leave.script.js';
import type { ContendedKeys } from './contended-keys.js';
import type { FairQueueContext } from './fair-queue-context.js';

/**
 * The fair queue's protocol for one waiter of one key (see scripts/queue.lua.ts): the names its scripts
 * use and one method per call. The waiting itself (when to call what) is `QueueWait`'s.
 */
export class QueueCalls {
  readonly lockKey: string;
  readonly tag: string;
  private readonly fenceKey: string;
  private readonly queueKey: string;
  private readonly grantChannelBase: string;
  /** The entry after its clock field: everything but the clock is fixed for the wait. */
  private readonly entryTail: string;
  private readonly checkScript: RedisScript;
  private readonly leaveScript: RedisScript;

  constructor(
    private readonly context: FairQueueContext,
    private readonly contended: ContendedKeys,
    private readonly request: QueuedAcquireRequest,
    waiter: number,
    heartbeatMs: number,
  ) {
    const { layout } = context;
    this.lockKey = layout.lockKey(request.key);
    ({ tag: this.tag, fenceKey: this.fenceKey, queueKey: this.queueKey } = layout.queueNames(this.lockKey));
    this.grantChannelBase = layout.grantChannel(this.tag, '');
    this.entryTail = `|${heartbeatMs}|${context.instance}|${waiter}|${request.token}|${request.holder}`;
    this.checkScript = queueCheckScriptFor(context.sharded);
    this.leaveScript = queueLeaveScriptFor(context.sharded);
  }

  /**
   * A grant, or a place at the end of the line. Where this instance last found a queue, a plain RPUSHX
   * joins it in one command; where it finds none, the full attempt runs (grant, or start the queue).
   */
  join(onUnknownOutcome: (call: SentCommand) => void): Promise<QueuedReply> {
    const clock = clockMicros();
    const entry = clock + this.entryTail;
    return this.contended.has(this.lockKey) ? this.joinBehind(entry, clock, onUnknownOutcome) : this.attempt(entry, clock, onUnknownOutcome);
  }

  private async joinBehind(entry: string, clock: string, onUnknownOutcome: (call: SentCommand) => void): Promise<QueuedReply> {
    const position = await this.context.commands.run(
      'acquire',
      this.request.key,
      this.lockKey,
      (client) => client.rpushx(this.queueKey, entry),
      onUnknownOutcome,
    );
    return position > 0 ? { granted: false, position } : this.attempt(entry, clock, onUnknownOutcome);
  }

  private attempt(entry: string, clock: string, onUnknownOutcome: (call: SentCommand) => void): Promise<QueuedReply> {
    const { key, token, leaseMs, holder } = this.request;
    const args = acquireQueuedArgs(this.lockKey, this.fenceKey, this.queueKey, token, leaseMs, holder, clock, entry);
    return this.context.commands.runScript('acquire', key, this.lockKey, ACQUIRE_QUEUED_SCRIPT, ACQUIRE_QUEUED_KEYS, args, this.noteReply, onUnknownOutcome);
  }

  /** Reads the reply, and remembers whether the key was contended (see `ContendedKeys`). */
  private readonly noteReply = (reply: unknown): QueuedReply => {
    const parsed = parseQueuedReply(reply);
    this.contended.note(this.lockKey, !parsed.granted);
    return parsed;
  };

  /** A look at the queue that renews the entry to `renewedEntry` (see queue-check.script.ts). */
  check(renewedEntry: string): Promise<QueueCheckReply> {
    const { key, token, leaseMs } = this.request;
    const args = queueCheckArgs(this.lockKey, this.fenceKey, this.queueKey, token, renewedEntry, clockMicros(), leaseMs, this.grantChannelBase);
    return this.context.commands.runScript('acquire', key, this.lockKey, this.checkScript, QUEUE_CHECK_KEYS, args, parseQueueCheckReply);
  }

  /** Removes the waiter's entries; the fencing token if the key was handed to it meanwhile. */
  leave(): Promise<number | undefined> {
    const { key, token } = this.request;
    const args = queueLeaveArgs(this.lockKey, this.fenceKey, this.queueKey, token, clockMicros(), this.grantChannelBase);
    return this.context.commands.runScript('acquire', key, this.lockKey, this.leaveScript, QUEUE_LEAVE_KEYS, args, parseQueueLeaveReply);
  }

  /** The waiter's queue entry as of now (see scripts/queue.lua.ts). */
  entry(): string {
    return clockMicros() + this.entryTail;
  }
}
