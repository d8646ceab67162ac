import type { QueuedAcquireRequest } from '../../lock-store.interface.js';
import { clockMicros } from '../client-clock.js';
import type { SentCommand } from '../commands/redis-commands.js';
import type { QueuedReply } from '../scripts/acquire-queued.script.js';
import type { QueueCheckReply } from '../scripts/queue-check.script.js';
import type { RedisScript } from '../scripts/redis-script.js';
import type { ContendedKeys } from './contended-keys.js';
import type { FairQueueContext } from './fair-queue-context.js';
import type { QueueJoinInput, QueueProtocol } from './queue-protocol.js';

/**
 * The fair queue's protocol for one waiter of one key (see scripts/queue.lua.ts, and
 * scripts/shared-queue.lua.ts for a shaped waiter): the names its scripts use and one method per call.
 * The waiting itself (when to call what) is `QueueWait`'s.
 */
export class QueueCalls {
  readonly lockKey: string;
  readonly tag: string;
  private readonly fenceKey: string;
  private readonly queueKey: string;
  private readonly grantChannelBase: string;
  /** The entry after its clock field: everything but the clock is fixed for the wait. */
  private readonly entryTail: string;
  private readonly joinScript: RedisScript<QueueJoinInput, QueuedReply>;

  constructor(
    private readonly context: FairQueueContext,
    private readonly contended: ContendedKeys,
    private readonly protocol: QueueProtocol,
    private readonly request: QueuedAcquireRequest,
    waiter: number,
    heartbeatMs: number,
  ) {
    const { layout } = context;
    this.lockKey = layout.lockKey(request.key);
    ({ tag: this.tag, fenceKey: this.fenceKey, queueKey: this.queueKey } = protocol.names(layout, this.lockKey));
    this.grantChannelBase = layout.grantChannel(this.tag, '');
    this.entryTail = `|${heartbeatMs}|${context.instance}|${waiter}|${request.token}${protocol.entryShape}|${request.holder}`;
    this.joinScript = contended.joinScript(protocol.join);
  }

  /**
   * A grant, or a place at the end of the line. Where this instance last found a queue, a plain RPUSHX
   * joins it in one command; where it finds none, the full attempt runs (grant, or start the queue).
   */
  join(onUnknownOutcome: (call: SentCommand) => void): Promise<QueuedReply> {
    const clock = clockMicros();
    const entry = clock + this.entryTail;
    return this.protocol.joinsBehind && this.contended.has(this.lockKey)
      ? this.joinBehind(entry, clock, onUnknownOutcome)
      : this.attempt(entry, clock, onUnknownOutcome);
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
    const { lockKey, fenceKey, queueKey, grantChannelBase, request } = this;
    const { key, token, leaseMs, holder } = request;
    const input = { lockKey, fenceKey, queueKey, token, leaseMs, holder, clockMicros: clock, entry, grantChannelBase };
    return this.context.commands.runScript('acquire', key, this.joinScript, input, onUnknownOutcome);
  }

  /** A look at the queue that renews the entry to `renewedEntry` (see queue-check.script.ts). */
  check(renewedEntry: string, onUnknownOutcome: (call: SentCommand) => void): Promise<QueueCheckReply> {
    const { lockKey, fenceKey, queueKey, grantChannelBase, request } = this;
    const { key, token, leaseMs } = request;
    const input = { lockKey, fenceKey, queueKey, token, renewedEntry, clockMicros: clockMicros(), leaseMs, grantChannelBase };
    return this.context.commands.runScript('acquire', key, this.protocol.check, input, onUnknownOutcome);
  }

  /** Removes the waiter's entries; the fencing token if the key was handed to it meanwhile. */
  leave(onUnknownOutcome: (call: SentCommand) => void): Promise<number | undefined> {
    const { lockKey, fenceKey, queueKey, grantChannelBase, request } = this;
    const input = { lockKey, fenceKey, queueKey, token: request.token, clockMicros: clockMicros(), grantChannelBase };
    return this.context.commands.runScript('acquire', request.key, this.protocol.leave, input, onUnknownOutcome);
  }

  /** The waiter's queue entry as of now (see scripts/queue.lua.ts). */
  entry(): string {
    return clockMicros() + this.entryTail;
  }
}
