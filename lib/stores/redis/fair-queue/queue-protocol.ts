import type { LockShape } from '../../lock-shape.js';
import type { RedisKeyLayout } from '../redis-key-layout.js';
import { ACQUIRE_QUEUED_SCRIPT, type AcquireQueuedInput, type QueuedReply } from '../scripts/acquire-queued.script.js';
import { QUEUE_CHECK_SCRIPT, type QueueCheckInput, type QueueCheckReply } from '../scripts/queue-check.script.js';
import { QUEUE_LEAVE_SCRIPT, type QueueLeaveInput } from '../scripts/queue-leave.script.js';
import type { RedisScript } from '../scripts/redis-script.js';
import { SHARED_ACQUIRE_QUEUED_SCRIPT } from '../scripts/shared-acquire-queued.script.js';
import { SHARED_QUEUE_CHECK_SCRIPT } from '../scripts/shared-queue-check.script.js';
import { SHARED_QUEUE_LEAVE_SCRIPT } from '../scripts/shared-queue-leave.script.js';
import { shapeOfEntry } from '../scripts/shared-queue.lua.js';

/**
 * What a wait sends to its queue's join: the plain join's input, and the slot's grant channel without the
 * instance, with which the shaped join tells the waiters its serving reaches (the plain join serves nobody
 * and leaves it unread).
 */
export interface QueueJoinInput extends AcquireQueuedInput {
  readonly grantChannelBase: string;
}

/**
 * Which queue a waiter stands in and the scripts it joins, looks at and leaves it with: the plain fair
 * queue (scripts/queue.lua.ts), or the queue of shaped waiters (scripts/shared-queue.lua.ts). The two take
 * the same inputs and give the same replies, so one wait (`QueueWait`, `QueueCalls`) serves both.
 */
export interface QueueProtocol {
  /** The queue's names for a lock key, from one slot computation. */
  names(layout: RedisKeyLayout, lockKey: string): { readonly tag: string; readonly fenceKey: string; readonly queueKey: string };
  /** What the waiter's entry carries between its token and its holder ('' for a plain waiter: nothing). */
  readonly entryShape: string;
  /**
   * Whether a plain RPUSHX may stand for the join where the queue was found standing (see `QueueCalls.join`):
   * not for a writer, whose join also takes away the mark its first attempt may have left (a mark kept while
   * it stands in line would keep out the readers ahead of it).
   */
  readonly joinsBehind: boolean;
  /** The join (a grant, or a place at the end of the line), before `ContendedKeys` reads its replies. */
  readonly join: RedisScript<QueueJoinInput, QueuedReply>;
  readonly check: RedisScript<QueueCheckInput, QueueCheckReply>;
  readonly leave: RedisScript<QueueLeaveInput, number | undefined>;
}

/** Plain waiters. */
export const PLAIN_QUEUE: QueueProtocol = {
  names: (layout, lockKey) => layout.queueNames(lockKey),
  entryShape: '',
  joinsBehind: true,
  join: ACQUIRE_QUEUED_SCRIPT,
  check: QUEUE_CHECK_SCRIPT,
  leave: QUEUE_LEAVE_SCRIPT,
};

/** Waiters in `shape` (read, write, or a permit of N). */
export function sharedQueue(shape: LockShape): QueueProtocol {
  return {
    names: (layout, lockKey) => layout.queueNames(lockKey, 'shaped'),
    entryShape: `|${shapeOfEntry(shape)}`,
    joinsBehind: shape.mode !== 'write',
    join: SHARED_ACQUIRE_QUEUED_SCRIPT,
    check: SHARED_QUEUE_CHECK_SCRIPT,
    leave: SHARED_QUEUE_LEAVE_SCRIPT,
  };
}
