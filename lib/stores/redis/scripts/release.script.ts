import { handOffLua, queueNamesLua, recheckFirstLua } from './queue.lua.js';
import { heldByLua } from './lock-value.js';
import { releaseSharedLua } from './shared-release.lua.js';
import { defineScript, publishingLua } from './redis-script.js';

/**
 * KEYS[1] lock key. ARGV[1] token, ARGV[2] keep ms, ARGV[3] `<slot tag>:<key prefix length>:<the caller's
 * clock in µs>`, which only the announcing and handing-over paths read (one argument for the three: every
 * argument costs the server a little on every release).
 *
 * Token-checked. With keep ms > 0 the key is not deleted but left to expire after that long (minimum
 * hold); the first waiter in the fair queue, if any, is told when to look again. Otherwise, by the lock
 * value's flag (see lock-value.ts):
 * - `-` nobody waits: the key is deleted, and that is all (a read and a delete, like the raw protocol);
 * - `w` waiters retrying on notifications: deleted, and announced on the lock's release channel;
 * - `q` waiters in the fair queue: the key goes straight to the first live waiter (entries whose
 *   heartbeat ran out are dropped on the way) in the same step, with a new fencing token and a TTL of that
 *   waiter's heartbeat lease, and only that waiter is told, on its instance's grant channel. The waiter
 *   extends the lease to its full length through its watchdog when it needs it. When the queue turns out
 *   empty, the key is deleted and announced as for `w`.
 *
 * A hash at the lock key is a read/write lock or a semaphore (see shared-hold.lua.ts): its hold of the token
 * is released there, handed on to the shaped waiters' queue if any (shared-release.lua.ts), or announced.
 *
 * Every name the script builds (queue, fencing counter, channels) carries the lock key's slot tag, so a
 * Cluster node serves all of them.
 */
function releaseLua(publish: string): string {
  return `
local value = redis.pcall('GET', KEYS[1])
if type(value) ~= 'string' then
  if type(value) ~= 'table' then return 0 end
  local tag, plength, callerClock = string.match(ARGV[3], '^([^:]*):(%d+):(%d+)$')
  ${queueNamesLua('KEYS[1]', 'tag', 'plength')}
  ${releaseSharedLua(publish)}
end
if not ${heldByLua('value', 'ARGV[1]')} then return 0 end
local flag = string.byte(value)
local keep = tonumber(ARGV[2])
if flag == 45 then
  if keep > 0 then
    redis.call('PEXPIRE', KEYS[1], keep)
  else
    redis.call('DEL', KEYS[1])
  end
  return 1
end
local tag, plength, clock = string.match(ARGV[3], '^([^:]*):(%d+):(%d+)$')
${queueNamesLua('KEYS[1]', 'tag', 'plength')}
if keep > 0 then
  redis.call('PEXPIRE', KEYS[1], keep)
  if flag == 113 then
    ${recheckFirstLua(publish, 'keep', 'queue', 'grants')}
  end
  return 1
end
if flag == 113 then
  ${handOffLua({ lockKey: 'KEYS[1]', clock: 'clock', publish })}
  if handedTo then return 1 end
end
redis.call('DEL', KEYS[1])
redis.call('${publish}', released, '')
return 1
`;
}

/** The script's PUBLISH and SPUBLISH builds, by sharded pub/sub (a drill looks for a build's SHA on the wire). */
export const releaseScriptFor = publishingLua(releaseLua);

export interface ReleaseInput {
  readonly lockKey: string;
  readonly token: string;
  readonly keepMs: number;
  /** `<slot tag>:<key prefix length>:`, the start of ARGV[3] (see the script). */
  readonly slotTagAndPrefix: string;
  /** The caller's clock in µs, the end of ARGV[3]. */
  readonly clockMicros: string | number;
}

/** 1 released (or kept for the minimum hold), 0 not ours. */
export function releasedReply(reply: unknown): boolean {
  return reply === 1;
}

export const RELEASE_SCRIPT = defineScript({
  lua: releaseScriptFor,
  numKeys: 1,
  keysAndArgs: (input: ReleaseInput) => [input.lockKey, input.token, input.keepMs, input.slotTagAndPrefix + input.clockMicros],
  parse: releasedReply,
  ownershipToken: (input) => input.token,
});
