import { recheckFirstLua } from './queue.lua.js';
import { keepAtLeastLua, SERVER_NOW_LUA, sharedGrantLua, sharedStateLua } from './shared-hold.lua.js';
import { sharedHandOffLua } from './shared-queue.lua.js';

/**
 * Lua: the release of a shared hold at `KEYS[1]` by token `ARGV[1]` with keep ms `ARGV[2]` (see the
 * release script); returns 1 released (or kept), 0 not ours. Expects the names of `queueNamesLua` and
 * `callerClock` (the releasing client's clock in µs, digits).
 *
 * Where shaped waiters queue (`fair: true`, see shared-queue.lua.ts; the hash's `q` mark says so), the hold
 * freed is handed to the next live waiter(s) in line in the same step, and only they are told; a kept hold
 * (minimum hold) tells the first of them when to look again (only then: an unmarked kept release, every
 * minimum hold of a store without `fair`, looks at no queue). Otherwise, and when the queue took nothing,
 * the release is announced on `released` (the lock's release channel) with `publish`, for waiters retrying on notifications:
 * readers and permit holders come and go often while others wait, and a shared release that announced only
 * when marked would need the mark kept up across holders; the plain path keeps its announce-when-marked
 * economy. A release whose hold went to a waiter that still has others behind it announces nothing: it
 * freed nothing anybody else could take.
 */
export function releaseSharedLua(publish: string): string {
  return `
local field = '#' .. ARGV[1]
-- The hold and the queue's mark in one read: a release where nobody queues pays nothing for the queue.
local read = redis.pcall('HMGET', KEYS[1], field, 'q')
local held, queueMarked = read[1], read[2]
if type(held) ~= 'string' then return 0 end
${SERVER_NOW_LUA}
local deadline, rest = string.match(held, '^(%d+)(|.*)$')
if tonumber(deadline) <= now then
  redis.call('HDEL', KEYS[1], field)
  return 0
end
local keep = tonumber(ARGV[2])
if keep > 0 then
  redis.call('HSET', KEYS[1], field, string.format('%.0f', now + keep) .. rest)
  ${keepAtLeastLua('KEYS[1]', 'ARGV[2]')}
  if queueMarked then${recheckFirstLua(publish, 'keep', 'sharedQueue', 'grants')}
  end
  return 1
end
redis.call('HDEL', KEYS[1], field)
if queueMarked then
  ${sharedStateLua('KEYS[1]')}
  ${sharedGrantLua('KEYS[1]', 'fenceKey', 'callerClock')}
  ${sharedHandOffLua({ lockKey: 'KEYS[1]', queue: 'sharedQueue', grants: 'grants', clock: 'callerClock', marked: 'queueMarked', publish })}
  -- Nobody left in line: the mark goes, and looks at the queue with it.
  if not queueLeft then redis.call('HDEL', KEYS[1], 'q') end
  if handed > 0 then
    if not queueLeft then redis.call('${publish}', released, '') end
    return 1
  end
end
if redis.call('HLEN', KEYS[1]) <= 1 then redis.call('DEL', KEYS[1]) end
redis.call('${publish}', released, '')
return 1`;
}
