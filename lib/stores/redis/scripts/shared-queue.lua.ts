import type { LockShape } from '../../lock-shape.js';
import { announceGrantLua, QUEUE_ENTRY_PATTERN, SERVED_ENTRY } from './queue.lua.js';
import { keepAtLeastLua } from './shared-hold.lua.js';

/**
 * The fair queue of a key's shaped waiters (semaphore permits, readers and writers), with `fair: true`: the
 * plain fair queue's machinery (queue.lua.ts: heartbeats, hand-off with a heartbeat-long TTL, grant
 * channels and their proof, give-up, clean-up of unknown outcomes) over the shared hold's hash
 * (shared-hold.lua.ts). Its own list, `<prefix>#shared-queue:{tag}<key>`, beside the plain one in the lock
 * key's hash slot: the plain scripts never meet a shaped waiter, nor these scripts a plain one. An entry
 * is a plain entry with the waiter's shape after its token:
 *
 *     <clockµs>|<heartbeatMs>|<instance>|<waiter>|<token>|<shape>|<holder>
 *
 * `shape` is `p<N>` (a permit of N: each grant counts the holders against the N of the waiter it goes to),
 * `r` or `w`. Up to the token it reads as a plain entry (`QUEUE_ENTRY_PATTERN`), so the entry's renewal and
 * leaving are the plain queue's Lua.
 *
 * Whoever looks serves the queue first, in the same script: a release (while the hash is marked `q`, which
 * serving keeps up while anybody stands in line: a release where nobody queues does not look), a waiter's
 * join or look, a single attempt, a leave. Serving grants holds to the live waiters at the head, in order,
 * while the grant rule lets the first of them in (`grantable` of shared-hold.lua.ts; expired holds, a crashed holder's
 * permit, were dropped just before), and stops at the first it does not: nobody overtakes a live waiter,
 * and a caller that finds a live waiter still standing queues behind it (a single attempt is turned away).
 * Entries whose heartbeat ran out on the caller's clock are dropped on the way, as in the plain queue.
 */

/** How an entry's tail after the token reads: its shape and N, then the holder (see above). */
export const SHAPE_PATTERN = '^([rwp])(%d*)|(.*)$';

/** What a waiter's entry says of its shape (see above). */
export function shapeOfEntry(shape: LockShape): string {
  return shape.permits !== undefined ? `p${shape.permits}` : shape.mode === 'read' ? 'r' : 'w';
}

export interface SharedHandOffNames {
  /** Lua expressions: the lock key, the shared queue, the slot's grant channel without the instance, the caller's clock in µs (digits). */
  readonly lockKey: string;
  readonly queue: string;
  readonly grants: string;
  readonly clock: string;
  /**
   * The caller's local that says the hash is marked `q` (`queueMarked` of `sharedStateLua`): serving reads
   * it and sets it when it marks the hash.
   */
  readonly marked: string;
  /** `PUBLISH` or `SPUBLISH`. */
  readonly publish: string;
  /**
   * For a call that may itself be in line (a join, a look): the caller's token and lease (Lua expressions).
   * Its own entry, when the queue reaches it, is granted for its whole lease, and nobody is told.
   */
  readonly self?: { readonly token: string; readonly leaseMs: string };
}

/**
 * Lua that serves the shared queue (see above), by the grant functions of `sharedGrantLua` (which read and
 * update the state of `sharedStateLua`, `now` among it: the caller sets them up). Each waiter served gets a hold with a fresh fencing token and a TTL of its heartbeat
 * lease (a waiter that died meanwhile holds it no longer; it renews to its lease through its watchdog),
 * and is told on its instance's grant channel as in the plain queue. Leaves `handed` (holds granted),
 * `queueLeft` (a live waiter still stands first) and `selfFence` (the caller's own grant's token, or nil),
 * the key's expiry at or past every deadline granted, and the hash marked `q` (`names.marked`) while
 * anybody stands in line.
 */
export function sharedHandOffLua(names: SharedHandOffNames): string {
  const { self, queue, marked } = names;
  const announced = announceGrantLua(names.publish, { queue, grants: names.grants, ...SERVED_ENTRY });
  return `
local handed, queueLeft, selfFence, longest = 0, false, nil, 0
local alive = math.floor(tonumber(${names.clock}) / 1000)
local entry = redis.call('LINDEX', ${queue}, 0)
while entry do
  local written, heartbeat, instance, waiter, token, rest = string.match(entry, '${QUEUE_ENTRY_PATTERN}')
  local shape, n, holder
  if rest then shape, n, holder = string.match(rest, '${SHAPE_PATTERN}') end
  if shape and tonumber(written) / 1000 + tonumber(heartbeat) >= alive then
    if not grantable(shape, tonumber(n) or 0) then
      queueLeft = true
      break
    end
    local ttl = tonumber(heartbeat)${self ? `\n    if token == ${self.token} then ttl = tonumber(${self.leaseMs}) end` : ''}
    local fence = grantHold(token, shape, ttl, holder)
    if fence then
      handed = handed + 1
      if ttl > longest then longest = ttl end${self ? `\n      if token == ${self.token} then selfFence = fence else${announced}\n      end` : announced}
    end
  end
  -- Served, dead, or holding already (its entry from a re-sent join): out of line.
  redis.call('LPOP', ${queue})
  entry = redis.call('LINDEX', ${queue}, 0)
end
if longest > 0 then${keepAtLeastLua(names.lockKey, 'longest')}
end
-- A live waiter still stands first: the hash is marked, so that its holders' releases serve the queue
-- (holds just handed out made it anew, unmarked).
if queueLeft and not ${marked} then
  redis.call('HSET', ${names.lockKey}, 'q', '1')
  ${marked} = true
end`;
}
