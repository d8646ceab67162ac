import type { AcquireResult } from '../../lock-store.interface.js';
import { nextFenceLua } from './fence.lua.js';
import { markWaitedForLua, heldByLua, fenceOfLua } from './lock-value.js';
import { defineScript } from './redis-script.js';

export interface AcquireInput {
  readonly lockKey: string;
  /** The fencing counter of the lock key's hash slot (see `RedisKeyLayout.fenceKey`). */
  readonly fenceKey: string;
  readonly token: string;
  readonly leaseMs: number;
  /** Who asks, for the runbook. */
  readonly holder: string;
  /** The caller's clock in µs (see fence.lua.ts and client-clock.ts). */
  readonly clockMicros: string | number;
}

/**
 * KEYS[1] lock key, KEYS[2] fencing counter of the lock key's hash slot.
 * ARGV[1] token, ARGV[2] lease ms, ARGV[3] holder description, ARGV[4] the caller's clock in µs.
 *
 * The grant is one `SET … NX PX` of the lock value (see lock-value.ts) carrying the fencing token issued
 * just before it (see fence.lua.ts): key, TTL and token in one atomic step, two commands inside the server.
 * A free key is all it looks for: it is every single attempt without `fair` (a waiter turned away then
 * joins the queue, acquire-queued.script.ts); with `fair`, the one-shot attempt that respects the queue
 * (`ACQUIRE_IF_NO_QUEUE_SCRIPT`) is used instead.
 *
 * When the key is taken:
 * - holding our token, it is a second delivery of an acquisition whose reply was lost (ioredis re-sends
 *   unanswered commands after a reconnect): granted again, with the same fencing token;
 * - otherwise the holder's remaining TTL is returned, and the lock value is marked (`w`) so that its release
 *   announces itself to the waiters that will now subscribe; unmarked releases announce nothing. A value
 *   this library did not write (a hash of an earlier version, anything else) reads as held and is left as
 *   it is.
 */
const lua = `${nextFenceLua('KEYS[2]', 'ARGV[4]')}
if redis.call('SET', KEYS[1], '-' .. ARGV[1] .. '|' .. fence .. '|' .. ARGV[3], 'PX', ARGV[2], 'NX') then
  return tonumber(fence)
end
local value = redis.pcall('GET', KEYS[1])
if type(value) == 'string' then
  if ${heldByLua('value', 'ARGV[1]')} then
    return tonumber(${fenceOfLua('value', 'ARGV[1]')})
  end
end${markWaitedForLua('KEYS[1]', 'value')}
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
return -1 - ttl
`;

/**
 * The reply is one integer (an array would cost the server a table conversion per grant): a fencing token
 * (> 0) for a grant; for a denial 0 when the holder's TTL is unknown, else -1 - TTL.
 */
export function parseAcquireReply(reply: unknown): AcquireResult {
  const value = reply as number;
  if (value > 0) return { acquired: true, fencingToken: value };
  return { acquired: false, ttlMs: value === 0 ? -1 : -1 - value };
}

export const ACQUIRE_SCRIPT = defineScript({
  lua,
  numKeys: 2,
  keysAndArgs: (input: AcquireInput) => [input.lockKey, input.fenceKey, input.token, input.leaseMs, input.holder, input.clockMicros],
  parse: parseAcquireReply,
  ownershipToken: (input) => input.token,
});
