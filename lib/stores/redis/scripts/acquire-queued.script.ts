import { parseAcquireReply } from './acquire.script.js';
import { nextFenceLua } from './fence.lua.js';
import { QUEUE_ENTRY_PATTERN, QUEUE_TTL_MS, type QueueKeys } from './queue.lua.js';
import { heldByLua, fenceOfLua } from './lock-value.js';
import { defineScript, LuaScript } from './redis-script.js';
import { keepAtLeastLua } from './shared-hold.lua.js';

/**
 * The fair queue's acquire (see queue.lua.ts). KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3] queue.
 * ARGV[1] token, ARGV[2] lease ms, ARGV[3] holder, ARGV[4] the caller's clock in µs, ARGV[5] the caller's
 * queue entry, or '' for a single attempt that must not queue.
 *
 * Nobody overtakes the queue: while it exists, a waiter joins at its end (one `RPUSHX`, which also tells
 * that the queue exists: the key's holder hands it on when it releases), and a single attempt is turned
 * away, unless the key is free and every waiter in the queue is dead (then the queue goes and it is granted). Without a queue it is the plain grant (acquire.script.ts). When the key is taken, the caller
 * starts the queue and the holder's lock value is marked `q`, so its release hands the key to the first
 * waiter instead of deleting it. A second delivery of a grant whose reply was lost is granted again, with
 * the same fencing token, and so is a join that finds the key handed to an entry of an earlier join of the
 * same wait (it stood alone, so no queue is left to join): either way the key is kept for at least the
 * lease from now, since the caller counts a whole lease from its send time and a hand-off lasts one
 * heartbeat.
 *
 * Reply, one integer: a fencing token (> 0) for a grant; -position for a waiter that joined the queue
 * (position 1 is first in line); for a single attempt turned away 0 when the holder's TTL is unknown,
 * else -1 - TTL.
 *
 * One build, sent by two definitions: the join and the single attempt read its reply differently.
 */
const lua = new LuaScript(`
local queued = ARGV[5] ~= ''
if queued then
  local position = redis.call('RPUSHX', KEYS[3], ARGV[5])
  if position > 0 then
    redis.call('PEXPIRE', KEYS[3], ${QUEUE_TTL_MS})
    return -position
  end
elseif redis.call('EXISTS', KEYS[3]) == 1 then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl ~= -2 then
    if ttl < 0 then return 0 end
    return -1 - ttl
  end
  -- The key is free and a queue exists: its waiters go first, unless every one of them is dead (its
  -- heartbeat ran out on this caller's clock: a pod killed while it waited). A queue of the dead is
  -- dropped, and the attempt goes on.
  local now = math.floor(tonumber(ARGV[4]) / 1000)
  for _, entry in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    local written, heartbeat = string.match(entry, '${QUEUE_ENTRY_PATTERN}')
    if written and tonumber(written) / 1000 + tonumber(heartbeat) >= now then return 0 end
  end
  redis.call('DEL', KEYS[3])
end
${nextFenceLua('KEYS[2]', 'ARGV[4]')}
if redis.call('SET', KEYS[1], '-' .. ARGV[1] .. '|' .. fence .. '|' .. ARGV[3], 'PX', ARGV[2], 'NX') then
  return tonumber(fence)
end
local value = redis.pcall('GET', KEYS[1])
local ours = type(value) == 'string' and string.find(value, '^[-wq][^|]+|%d+|')
if ours and ${heldByLua('value', 'ARGV[1]')} then${keepAtLeastLua('KEYS[1]', 'ARGV[2]')}
  return tonumber(${fenceOfLua('value', 'ARGV[1]')})
end
if not queued then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then return 0 end
  return -1 - ttl
end
redis.call('RPUSH', KEYS[3], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ${QUEUE_TTL_MS})
if ours and string.byte(value) ~= 113 then redis.call('SETRANGE', KEYS[1], 0, 'q') end
return -1
`);

/** A single attempt that respects the queue: granted only while nobody stands in line. */
export interface AcquireIfNoQueueInput extends QueueKeys {
  readonly token: string;
  readonly leaseMs: number;
  readonly holder: string;
  /** The caller's clock in µs (see fence.lua.ts). */
  readonly clockMicros: string | number;
}

/** A waiter's join: granted, or queued at the end of the line with `entry` (see queue.lua.ts). */
export interface AcquireQueuedInput extends AcquireIfNoQueueInput {
  readonly entry: string;
}

/** The reply of a call that may queue: granted (with its fencing token), or the position it queued at. */
export type QueuedReply = { readonly granted: true; readonly fencingToken: number } | { readonly granted: false; readonly position: number };

export function parseQueuedReply(reply: unknown): QueuedReply {
  const value = reply as number;
  return value > 0 ? { granted: true, fencingToken: value } : { granted: false, position: -value };
}

/** KEYS lock key, fencing counter, queue; ARGV token, lease ms, holder, clock, entry ('' for none). */
function queuedKeysAndArgs(input: AcquireIfNoQueueInput, entry: string): (string | number)[] {
  return [input.lockKey, input.fenceKey, input.queueKey, input.token, input.leaseMs, input.holder, input.clockMicros, entry];
}

/** The fair queue's join (see the script). */
export const ACQUIRE_QUEUED_SCRIPT = defineScript({
  lua,
  numKeys: 3,
  keysAndArgs: (input: AcquireQueuedInput) => queuedKeysAndArgs(input, input.entry),
  parse: parseQueuedReply,
  ownershipToken: (input) => input.token,
});

/**
 * The one-shot attempt of a fair store: the same script with no queue entry, its reply encoded as the
 * plain acquire's (see acquire.script.ts).
 */
export const ACQUIRE_IF_NO_QUEUE_SCRIPT = defineScript({
  lua,
  numKeys: 3,
  keysAndArgs: (input: AcquireIfNoQueueInput) => queuedKeysAndArgs(input, ''),
  parse: parseAcquireReply,
  ownershipToken: (input) => input.token,
});
