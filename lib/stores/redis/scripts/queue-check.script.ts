import { handOffLua, QUEUE_TTL_MS, renewEntryLua, type QueueKeys } from './queue.lua.js';
import { keepAtLeastLua } from './shared-hold.lua.js';
import { heldByLua, fenceOfLua } from './lock-value.js';
import { defineScript, publishingLua } from './redis-script.js';

/**
 * A waiter's look at the fair queue (see queue.lua.ts), every third of its heartbeat lease while it waits,
 * and whenever it has reason to (its subscription just came up, a release kept the key for its minimum
 * hold). KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] queue. ARGV[1] token, ARGV[2] its entry with
 * a new heartbeat deadline, ARGV[3] the caller's clock in µs, ARGV[4] its lease ms, ARGV[5] the slot's
 * grant channel without the instance. The caller's entry is found by its token, so a check whose outcome
 * was unknown (it may have renewed the entry, or not) is no obstacle to the next.
 *
 * - The key holds its token: it was handed over and the message missed (a subscriber reconnecting). The
 *   key is kept for at least the caller's lease from now, and the reply is a grant like any other: the
 *   caller counts from this check's send time, since when the hand-off came is not known (a join re-sent
 *   after a reconnect, or retried after a stall whose clean-up never answered, stands in line a second
 *   time behind its own first entry, which may have been handed the key before it).
 * - Its entry is gone: dropped as dead (its clock was far behind the releaser's, or it was cut off for longer
 *   than its heartbeat lease) or the queue expired: it must join again.
 * - Otherwise the heartbeat is renewed (duplicates of the entry, from a re-sent join, go, and so does every
 *   entry whose heartbeat ran out on the caller's clock, wherever it stands), and when nobody
 *   holds the key (its holder died, a hand-off to a dead waiter ran out, a minimum hold ended) the key goes
 *   to the first live waiter: to the caller for its whole lease if that is the caller, else handed over as
 *   a release would. A holder whose value is not marked `q` (it was granted past the queue) is marked, so
 *   that its release hands over.
 *
 * Reply: {1, fencing token} granted (the key lives at least the lease from now); {2, position, holder's
 * TTL} still waiting; {0} not in the queue.
 */
function queueCheckLua(publish: string): string {
  return `
local value = redis.pcall('GET', KEYS[1])
local ours = type(value) == 'string' and string.find(value, '^[-wq][^|]+|%d+|')
${renewEntryLua('KEYS[3]', 'ARGV[1]', 'ARGV[2]', 'ARGV[3]')}
if ours and ${heldByLua('value', 'ARGV[1]')} then
  if position then redis.call('LREM', KEYS[3], 0, ARGV[2]) end${keepAtLeastLua('KEYS[1]', 'ARGV[4]')}
  return {1, tonumber(${fenceOfLua('value', 'ARGV[1]')})}
end
if not position then return {0} end
redis.call('PEXPIRE', KEYS[3], ${QUEUE_TTL_MS})
if value == false then
  local queue, fenceKey, grants = KEYS[3], KEYS[2], ARGV[5]
  ${handOffLua({ lockKey: 'KEYS[1]', clock: 'ARGV[3]', publish, self: { token: 'ARGV[1]', leaseMs: 'ARGV[4]' } })}
  if handedTo == ARGV[1] then return {1, tonumber(handedFence)} end
  if handedTo then position = math.max(1, position - 1) end
elseif ours and string.byte(value) ~= 113 then
  redis.call('SETRANGE', KEYS[1], 0, 'q')
end
return {2, position, redis.call('PTTL', KEYS[1])}
`;
}

export interface QueueCheckInput extends QueueKeys {
  readonly token: string;
  /** The waiter's entry with a new heartbeat deadline (see queue.lua.ts). */
  readonly renewedEntry: string;
  /** The caller's clock in µs. */
  readonly clockMicros: string | number;
  readonly leaseMs: number;
  /** The slot's grant channel without the instance. */
  readonly grantChannelBase: string;
}

export type QueueCheckReply =
  /** The key (or a hold of it) lives at least the caller's lease from this check on. */
  | { readonly status: 'granted'; readonly fencingToken: number }
  | { readonly status: 'waiting'; readonly position: number; readonly holderTtlMs: number }
  | { readonly status: 'gone' };

export function parseQueueCheckReply(reply: unknown): QueueCheckReply {
  const [status, a, b] = reply as [number, number?, number?];
  if (status === 1) return { status: 'granted', fencingToken: a! };
  if (status === 2) return { status: 'waiting', position: a!, holderTtlMs: b! };
  return { status: 'gone' };
}

/** KEYS lock key, fencing counter, queue; ARGV token, renewed entry, clock, lease ms, grant channel base. */
export function queueCheckKeysAndArgs(input: QueueCheckInput): (string | number)[] {
  return [input.lockKey, input.fenceKey, input.queueKey, input.token, input.renewedEntry, input.clockMicros, input.leaseMs, input.grantChannelBase];
}

export const QUEUE_CHECK_SCRIPT = defineScript({
  lua: publishingLua(queueCheckLua),
  numKeys: 3,
  keysAndArgs: queueCheckKeysAndArgs,
  parse: parseQueueCheckReply,
  ownershipToken: (input) => input.token,
});
