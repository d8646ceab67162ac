import { dropEntriesLua, handOffLua, type QueueKeys } from './queue.lua.js';
import { heldByLua, fenceOfLua } from './lock-value.js';
import { defineScript, publishingLua } from './redis-script.js';

/**
 * A waiter gives up its place in the fair queue (see queue.lua.ts): its deadline passed, its caller
 * aborted, the application shuts down, or a join whose outcome is unknown is cleaned up. KEYS[1] lock key,
 * KEYS[2] fencing counter, KEYS[3] queue. ARGV[1] token, ARGV[2] the caller's clock in µs, ARGV[3] the
 * slot's grant channel without the instance.
 *
 * Every entry of the token goes (it is found by its token: the caller may not know which entry a call
 * with an unknown outcome left), and so does every dead one. When the key turns out to hold the caller's
 * token, it was handed over while the caller was giving up: the reply says so and the caller decides (keep it, or release it, which
 * hands it on). When nobody holds the key, it is handed to the first live waiter, so that leaving never
 * leaves the queue stalled until somebody's next heartbeat.
 *
 * Reply: the fencing token (> 0) when the caller holds the key, else 0.
 */
function queueLeaveLua(publish: string): string {
  return `
${dropEntriesLua('KEYS[3]', 'ARGV[1]', 'ARGV[2]')}
local value = redis.pcall('GET', KEYS[1])
if type(value) == 'string' and ${heldByLua('value', 'ARGV[1]')} then
  local fence = ${fenceOfLua('value', 'ARGV[1]')}
  if fence then return tonumber(fence) end
end
if value == false then
  local queue, fenceKey, grants = KEYS[3], KEYS[2], ARGV[3]
  ${handOffLua({ lockKey: 'KEYS[1]', clock: 'ARGV[2]', publish })}
end
return 0
`;
}

export interface QueueLeaveInput extends QueueKeys {
  readonly token: string;
  /** The caller's clock in µs. */
  readonly clockMicros: string | number;
  /** The slot's grant channel without the instance. */
  readonly grantChannelBase: string;
}

/** The fencing token when the caller holds the key, else undefined. */
export function parseQueueLeaveReply(reply: unknown): number | undefined {
  const value = reply as number;
  return value > 0 ? value : undefined;
}

/** KEYS lock key, fencing counter, queue; ARGV token, clock, grant channel base. */
export function queueLeaveKeysAndArgs(input: QueueLeaveInput): (string | number)[] {
  return [input.lockKey, input.fenceKey, input.queueKey, input.token, input.clockMicros, input.grantChannelBase];
}

export const QUEUE_LEAVE_SCRIPT = defineScript({
  lua: publishingLua(queueLeaveLua),
  numKeys: 3,
  keysAndArgs: queueLeaveKeysAndArgs,
  parse: parseQueueLeaveReply,
  ownershipToken: (input) => input.token,
});
