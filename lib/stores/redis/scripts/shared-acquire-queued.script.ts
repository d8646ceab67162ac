import type { LockShape } from '../../lock-shape.js';
import { parseAcquireReply } from './acquire.script.js';
import { parseQueuedReply, type AcquireIfNoQueueInput, type AcquireQueuedInput } from './acquire-queued.script.js';
import { QUEUE_ENTRY_PATTERN, QUEUE_TTL_MS } from './queue.lua.js';
import { defineScript, publishingLua } from './redis-script.js';
import { keepAtLeastLua, keepMineLua, sharedLookLua } from './shared-hold.lua.js';
import { SHAPE_PATTERN, sharedHandOffLua, shapeOfEntry } from './shared-queue.lua.js';

/**
 * The shared queue's acquire (see shared-queue.lua.ts). KEYS[1] lock key, KEYS[2] fencing counter, KEYS[3]
 * the shared queue. ARGV[1] token, ARGV[2] lease ms, ARGV[3] holder, ARGV[4] the caller's clock in µs,
 * ARGV[5] the caller's queue entry (its shape in it), or '' for a single attempt that must not queue, which
 * then gives its shape in ARGV[6] ('r', 'w', 'p') and ARGV[7] (N for 'p'; for 'w' how long a writer turned
 * away keeps readers out, as in shared-acquire.script.ts), ARGV[8] the slot's grant channel without the
 * instance.
 *
 * The queue is served first (holds freed since anybody looked, a crashed holder's among them, go to the
 * live waiters at its head); then the caller is granted if nobody live stands in line and the grant rule
 * lets it in (shared-hold.lua.ts), else it joins at the end (a single attempt is turned away). A caller
 * whose own entry the serving reaches (a re-sent join) is granted for its whole lease. A plain lock at the
 * key turns every caller away: a waiter queues behind it, and the first in line notices its release at
 * its next look (a plain release hands nothing to this queue). A token that holds already (a second
 * delivery of a grant whose reply was lost, or a hand-off to an entry of an earlier join of the same wait)
 * is granted again with its own fencing token, its hold pushed to a whole lease from now (`keepMineLua`):
 * the caller counts a lease from its send time, and a hand-off lasts one heartbeat. A writer's single
 * attempt turned away marks it waiting, as without a queue (its wait's first attempt, before it joins, keeps
 * new readers out the same way); its join clears the mark: from then on its place in line keeps the
 * readers behind it out, and a mark would keep out the readers ahead of it too.
 *
 * Reply: a fencing token (> 0) for a grant; -position for a waiter that joined the queue; for a single
 * attempt turned away, as the plain acquire's (0 when nothing is known to end, else -1 - ms until the next
 * hold ends).
 */
function sharedAcquireQueuedLua(publish: string): string {
  return `
local queued = ARGV[5] ~= ''
local shape, n = ARGV[6], ARGV[7]
if queued then
  local _, _, _, _, _, rest = string.match(ARGV[5], '${QUEUE_ENTRY_PATTERN}')
  shape, n = string.match(rest, '${SHAPE_PATTERN}')
end
n = tonumber(n) or 0
local keyType = redis.call('TYPE', KEYS[1]).ok
local wait
if keyType == 'hash' or keyType == 'none' then
  -- A writer that joins stops keeping readers out by its mark (its first attempt's): its place in line does.
  if queued and shape == 'w' and keyType == 'hash' then redis.call('HDEL', KEYS[1], '~' .. ARGV[1]) end
  ${sharedLookLua('KEYS[1]', 'KEYS[2]', 'ARGV[4]', 'ARGV[1]')}
  if mineFence then${keepMineLua('KEYS[1]', 'ARGV[1]', 'ARGV[2]')}
    return tonumber(mineFence)
  end
  ${sharedHandOffLua({ lockKey: 'KEYS[1]', queue: 'KEYS[3]', grants: 'ARGV[8]', clock: 'ARGV[4]', marked: 'queueMarked', publish, self: { token: 'ARGV[1]', leaseMs: 'ARGV[2]' } })}
  if selfFence then return tonumber(selfFence) end
  if not queueLeft and grantable(shape, n) then
    local fence = grantHold(ARGV[1], shape, tonumber(ARGV[2]), ARGV[3])
    ${keepAtLeastLua('KEYS[1]', 'ARGV[2]')}
    return tonumber(fence)
  end
  if shape == 'w' and not queued then markWaitingWriter(ARGV[1], math.min(n, tonumber(ARGV[2]))) end
  -- In line behind holders: the hash says so, so that their releases serve the queue.
  if queued and (keyType == 'hash' or handed > 0) and not queueMarked then redis.call('HSET', KEYS[1], 'q', '1') end
  wait = earliest and earliest - now or -1
else
  wait = redis.call('PTTL', KEYS[1])
end
if queued then
  local position = redis.call('RPUSH', KEYS[3], ARGV[5])
  redis.call('PEXPIRE', KEYS[3], ${QUEUE_TTL_MS})
  return -position
end
if wait < 0 then return 0 end
return -1 - wait
`;
}

const builds = publishingLua(sharedAcquireQueuedLua);

/** A shaped waiter's join: its entry carries its shape (see shared-queue.lua.ts). */
export interface SharedQueueJoinInput extends AcquireQueuedInput {
  /** The slot's grant channel without the instance: serving the queue tells the waiters served. */
  readonly grantChannelBase: string;
}

/** A single attempt of a shaped grant that respects the shared queue. */
export interface SharedAcquireIfNoQueueInput extends AcquireIfNoQueueInput {
  readonly shape: LockShape;
  readonly grantChannelBase: string;
}

/** KEYS lock key, fencing counter, shared queue; ARGV token, lease, holder, clock, entry, shape, N or waiting ms, grant channel base. */
function keysAndArgs(input: SharedQueueJoinInput | SharedAcquireIfNoQueueInput, entry: string, shape: string, n: number | ''): (string | number)[] {
  const { lockKey, fenceKey, queueKey, token, leaseMs, holder, clockMicros, grantChannelBase } = input;
  return [lockKey, fenceKey, queueKey, token, leaseMs, holder, clockMicros, entry, shape, n, grantChannelBase];
}

/** A shaped waiter's join: a grant, or its place at the end of the line (see the script). */
export const SHARED_ACQUIRE_QUEUED_SCRIPT = defineScript({
  lua: builds,
  numKeys: 3,
  keysAndArgs: (input: SharedQueueJoinInput) => keysAndArgs(input, input.entry, '', ''),
  parse: parseQueuedReply,
  ownershipToken: (input) => input.token,
});

/** The one-shot shaped attempt of a fair store: the same script with no queue entry, its reply as the plain acquire's. */
export const SHARED_ACQUIRE_IF_NO_QUEUE_SCRIPT = defineScript({
  lua: builds,
  numKeys: 3,
  keysAndArgs: (input: SharedAcquireIfNoQueueInput) => {
    const { shape, leaseMs } = input;
    return keysAndArgs(input, '', shapeOfEntry(shape).charAt(0), shape.permits ?? shape.waitingMs ?? leaseMs);
  },
  parse: parseAcquireReply,
  ownershipToken: (input) => input.token,
});
