import type { QueuedAcquireRequest } from '../lock-store.interface.js';
import { clockMicros } from './client-clock.js';
import type { SentCommand } from './redis-commands.js';
import type { FairQueueContext, RedisFairQueue } from './redis-fair-queue.js';
import { ACQUIRE_QUEUED_KEYS, ACQUIRE_QUEUED_SCRIPT, acquireQueuedArgs, parseQueuedReply, type QueuedReply } from './scripts/acquire-queued.script.js';
import { parseQueueCheckReply, QUEUE_CHECK_KEYS, queueCheckArgs, type QueueCheckReply } from './scripts/queue-check.script.js';
import { parseQueueLeaveReply, QUEUE_LEAVE_KEYS, queueLeaveArgs } from './scripts/queue-leave.script.js';

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

  constructor(
    private readonly queue: RedisFairQueue,
    private readonly context: FairQueueContext,
    private readonly request: QueuedAcquireRequest,
  ) {
    const { layout } = context;
    this.lockKey = layout.lockKey(request.key);
    this.tag = layout.slotTag(this.lockKey);
    this.fenceKey = layout.fenceKeyOfTag(this.tag);
    this.queueKey = layout.queueKey(this.lockKey);
    this.grantChannelBase = layout.grantChannel(this.tag, '');
  }

  /**
   * A grant, or a place at the end of the line. Where this instance last found a queue, a plain RPUSHX
   * joins it in one command; where it finds none, the full attempt runs (grant, or start the queue).
   */
  async join(entry: string, onUnknownOutcome: (call: SentCommand) => void): Promise<QueuedReply> {
    const { key, token, leaseMs, holder } = this.request;
    const { commands } = this.context;
    if (this.queue.seenContended(this.lockKey)) {
      const position = await commands.run('acquire', key, this.lockKey, (client) => client.rpushx(this.queueKey, entry), onUnknownOutcome);
      if (position > 0) return { granted: false, position };
    }
    const args = acquireQueuedArgs(this.lockKey, this.fenceKey, this.queueKey, token, leaseMs, holder, clockMicros(), entry);
    const reply = await commands.runScript('acquire', key, this.lockKey, ACQUIRE_QUEUED_SCRIPT, ACQUIRE_QUEUED_KEYS, args, parseQueuedReply, onUnknownOutcome);
    this.queue.noteContended(this.lockKey, !reply.granted);
    return reply;
  }

  /** A look at the queue that renews the entry to `renewedEntry` (see queue-check.script.ts). */
  check(renewedEntry: string): Promise<QueueCheckReply> {
    const { key, token, leaseMs } = this.request;
    const args = queueCheckArgs(this.lockKey, this.fenceKey, this.queueKey, token, renewedEntry, clockMicros(), leaseMs, this.grantChannelBase);
    return this.context.commands.runScript('acquire', key, this.lockKey, this.queue.checkScript, QUEUE_CHECK_KEYS, args, parseQueueCheckReply);
  }

  /** Removes the waiter's entries; the fencing token if the key was handed to it meanwhile. */
  leave(): Promise<number | undefined> {
    const { key, token } = this.request;
    const args = queueLeaveArgs(this.lockKey, this.fenceKey, this.queueKey, token, clockMicros(), this.grantChannelBase);
    return this.context.commands.runScript('acquire', key, this.lockKey, this.queue.leaveScript, QUEUE_LEAVE_KEYS, args, parseQueueLeaveReply);
  }

  /** A queue entry with a heartbeat deadline `heartbeatMs` after `sentAt` (see scripts/queue.lua.ts). */
  entry(sentAt: number, heartbeatMs: number, waiter: string): string {
    const { token, holder } = this.request;
    return `${sentAt + heartbeatMs}|${heartbeatMs}|${this.context.instance}|${waiter}|${token}|${holder}`;
  }
}
