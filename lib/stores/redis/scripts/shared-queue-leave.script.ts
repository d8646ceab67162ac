import { parseQueueLeaveReply, queueLeaveKeysAndArgs } from './queue-leave.script.js';
import { dropEntriesLua } from './queue.lua.js';
import { defineScript, publishingLua } from './redis-script.js';
import { sharedLookLua } from './shared-hold.lua.js';
import { sharedHandOffLua } from './shared-queue.lua.js';

/**
 * A shaped waiter gives up its place in the shared queue (see shared-queue.lua.ts), as the plain queue
 * leave does (queue-leave.script.ts): same keys (the shared queue at KEYS[3]), arguments and reply. Every
 * entry of the token goes, and every dead one. When the caller holds the key already (handed a hold while
 * it was giving up), the reply says so with its fencing token and the caller decides (keep it, or release
 * it, which hands it on). Otherwise the queue is served, so that leaving never leaves a waiter behind it
 * stalled until somebody's next look (the one leaving may have been all that stood before it).
 */
function sharedQueueLeaveLua(publish: string): string {
  return `${dropEntriesLua('KEYS[3]', 'ARGV[1]', 'ARGV[2]')}
local keyType = redis.call('TYPE', KEYS[1]).ok
if keyType == 'hash' or keyType == 'none' then
  ${sharedLookLua('KEYS[1]', 'KEYS[2]', 'ARGV[2]', 'ARGV[1]')}
  if mineFence then return tonumber(mineFence) end
  ${sharedHandOffLua({ lockKey: 'KEYS[1]', queue: 'KEYS[3]', grants: 'ARGV[3]', clock: 'ARGV[2]', marked: 'queueMarked', publish })}
end
return 0
`;
}

export const SHARED_QUEUE_LEAVE_SCRIPT = defineScript({
  lua: publishingLua(sharedQueueLeaveLua),
  numKeys: 3,
  keysAndArgs: queueLeaveKeysAndArgs,
  parse: parseQueueLeaveReply,
  ownershipToken: (input) => input.token,
});
