import { RedisScript } from './define-script.js';
import { nextFenceLua } from './fence.lua.js';
import { QUEUE_ENTRY_PATTERN, QUEUE_TTL_MS, queueNamesLua } from './queue.lua.js';

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
 * Every name the script builds (queue, fencing counter, channels) carries the lock key's slot tag, so a
 * Cluster node serves all of them.
 */
const template = `
local value = redis.pcall('GET', KEYS[1])
if type(value) ~= 'string' then return 0 end
local n = #ARGV[1]
if string.find(value, ARGV[1], 2, true) ~= 2 or string.byte(value, n + 2) ~= 124 then return 0 end
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
if flag == 113 then
  ${queueNamesLua('KEYS[1]', 'tag', 'plength')}
  if keep > 0 then
    redis.call('PEXPIRE', KEYS[1], keep)
    local first = redis.call('LINDEX', queue, 0)
    if first then
      -- The first waiter looks again when the minimum hold is over.
      local _, _, instance, waiter = string.match(first, '${QUEUE_ENTRY_PATTERN}')
      if instance then redis.call('__PUBLISH__', grants .. instance, 'r|' .. waiter .. '|' .. keep) end
    end
    return 1
  end
  local now = math.floor(tonumber(clock) / 1000)
  local entry = redis.call('LPOP', queue)
  while entry do
    local expires, ttl, instance, waiter, token, holder = string.match(entry, '${QUEUE_ENTRY_PATTERN}')
    if expires and tonumber(expires) >= now then
      ${nextFenceLua('fenceKey', 'clock')}
      redis.call('SET', KEYS[1], 'q' .. token .. '|' .. fence .. '|' .. holder, 'PX', ttl)
      redis.call('__PUBLISH__', grants .. instance, 'g|' .. waiter .. '|' .. fence)
      -- The queue lives as long as it is used: its TTL is renewed now and then (one hand-off in 100).
      if string.sub(fence, -2) == '00' then
        redis.call('PEXPIRE', queue, ${QUEUE_TTL_MS})
      end
      return 1
    end
    entry = redis.call('LPOP', queue)
  end
elseif keep > 0 then
  redis.call('PEXPIRE', KEYS[1], keep)
  return 1
end
redis.call('DEL', KEYS[1])
local plen = tonumber(plength)
redis.call('__PUBLISH__', string.sub(KEYS[1], 1, plen) .. '#released:{' .. tag .. '}' .. string.sub(KEYS[1], plen + 1), '')
return 1
`;

const scripts = {
  plain: new RedisScript(template.replaceAll('__PUBLISH__', 'PUBLISH')),
  sharded: new RedisScript(template.replaceAll('__PUBLISH__', 'SPUBLISH')),
};

/** The script, for `RedisCommands.runScript`: PUBLISH or SPUBLISH (sharded pub/sub) for announcements. */
export function releaseScriptFor(sharded: boolean): RedisScript {
  return sharded ? scripts.sharded : scripts.plain;
}

export const RELEASE_KEYS = 1;

/** `slotTagAndPrefix` is `<slot tag>:<key prefix length>:` (see the script). */
export function releaseArgs(lockKey: string, token: string, keepMs: number, slotTagAndPrefix: string, clockMicros: number): (string | number)[] {
  return [lockKey, token, keepMs, slotTagAndPrefix + clockMicros];
}

/** 1 released (or kept for the minimum hold), 0 not ours. */
export function releasedReply(reply: unknown): boolean {
  return reply === 1;
}
