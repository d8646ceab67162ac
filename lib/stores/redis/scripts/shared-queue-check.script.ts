import { parseQueueCheckReply, queueCheckKeysAndArgs } from './queue-check.script.js';
import { QUEUE_TTL_MS, renewEntryLua } from './queue.lua.js';
import { defineScript, publishingLua } from './redis-script.js';
import { keepMineLua, sharedLookLua } from './shared-hold.lua.js';
import { sharedHandOffLua } from './shared-queue.lua.js';

/**
 * A shaped waiter's look at the shared queue (see shared-queue.lua.ts), as the plain queue check is for a
 * plain one (queue-check.script.ts): same keys (the shared queue at KEYS[3]), arguments and reply. Its
 * entry is renewed (duplicates and dead entries go, wherever they stand); the waiter holds the key already
 * (handed over, the message missed): granted, its hold pushed to a whole lease from now as the plain check
 * does; its entry gone: not in the queue; otherwise the queue is
 * served (the holds that ran out since anybody looked, a crashed holder's permit among them, go to the
 * live waiters at its head, and the caller's own entry, if reached, is granted for its whole lease), and
 * the reply says where it stands and in how long the next hold ends (the first in line looks again then).
 * A plain lock at the key: nothing to serve until it goes, and its TTL is the time to the next look.
 */
function sharedQueueCheckLua(publish: string): string {
  return `${renewEntryLua('KEYS[3]', 'ARGV[1]', 'ARGV[2]', 'ARGV[3]')}
local keyType = redis.call('TYPE', KEYS[1]).ok
local shared = keyType == 'hash' or keyType == 'none'
local wait
if shared then
  ${sharedLookLua('KEYS[1]', 'KEYS[2]', 'ARGV[3]', 'ARGV[1]')}
  if mineFence then
    if position then redis.call('LREM', KEYS[3], 0, ARGV[2]) end${keepMineLua('KEYS[1]', 'ARGV[1]', 'ARGV[4]')}
    return {1, tonumber(mineFence)}
  end
  if not position then return {0} end
  redis.call('PEXPIRE', KEYS[3], ${QUEUE_TTL_MS})
  ${sharedHandOffLua({ lockKey: 'KEYS[1]', queue: 'KEYS[3]', grants: 'ARGV[5]', clock: 'ARGV[3]', marked: 'queueMarked', publish, self: { token: 'ARGV[1]', leaseMs: 'ARGV[4]' } })}
  if selfFence then return {1, tonumber(selfFence)} end
  position = math.max(1, position - handed)
  wait = earliest and earliest - now or -1
elseif not position then
  return {0}
else
  redis.call('PEXPIRE', KEYS[3], ${QUEUE_TTL_MS})
  wait = redis.call('PTTL', KEYS[1])
end
return {2, position, wait}
`;
}

export const SHARED_QUEUE_CHECK_SCRIPT = defineScript({
  lua: publishingLua(sharedQueueCheckLua),
  numKeys: 3,
  keysAndArgs: queueCheckKeysAndArgs,
  parse: parseQueueCheckReply,
  ownershipToken: (input) => input.token,
});
