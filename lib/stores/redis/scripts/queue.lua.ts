import { createHash } from 'node:crypto';
import { nextFenceLua } from './fence.lua.js';
import { RESERVED_KEY_PREFIX } from '../../../keys/lock-key.js';
import { SHARED_QUEUE_MARK } from '../redis-key-layout.js';

/**
 * The fair queue of one lock key, as its scripts see it (acquire-queued, queue-check, queue-leave and the
 * hand-off in release). Everything lives in the lock key's hash slot (`{tag}`), so a Cluster node serves it
 * all, and everything expires on its own:
 *
 * - `<prefix>#queue:{tag}<key>`, a list of waiters, first in line first: entries
 *   `<clockµs>|<heartbeatMs>|<instance>|<waiter>|<token>|<holder>`. `clockµs` is the waiter's clock when it
 *   wrote the entry (it writes it anew at every look at the queue while it waits), `heartbeatMs` its
 *   heartbeat lease: the entry counts as alive until `clockµs / 1000 + heartbeatMs`, and a hand-off gives
 *   the waiter a TTL of that long (a waiter that crashed holds the key no longer). `instance` names its
 *   store's grant channel and `waiter` the wait within it. The list's own TTL
 *   ({@link QUEUE_TTL_MS}) is renewed by every join, every queue check and now and then by hand-offs: a queue whose
 *   waiters all crashed goes away.
 * - `<prefix>#granted:{tag}<instance>`, the channel on which an instance hears about grants (`g|waiter|fence|proof`)
 *   and about when to look again (`r|waiter|ms`) for its waiters of this hash slot.
 * - `<prefix>#fence:{tag}`, the slot's fencing counter (see fence.lua.ts).
 *
 * A waiter counts as gone once its heartbeat lease has run out on the clock of the client that looks (a releaser,
 * another waiter): clocks that disagree by more than a heartbeat lease can only make a live waiter lose its
 * place (it notices at its next check and queues again) or a dead one be handed the key for one heartbeat
 * lease, never give the key to two holders.
 */
export const QUEUE_ENTRY_PATTERN = '^(%d+)|(%d+)|([^|]*)|([^|]*)|([^|]*)|(.*)$';

/** The names a queue script's input carries: its declared keys (see `RedisKeyLayout.queueNames`). */
export interface QueueKeys {
  readonly lockKey: string;
  /** The fencing counter of the lock key's slot. */
  readonly fenceKey: string;
  readonly queueKey: string;
}

/**
 * A waiter's heartbeat lease: a waiter that died stands in line no longer than this, plus one look at the
 * queue of the waiter behind it. One that dies just before its heartbeat runs out can still be handed the
 * key, which it then holds for one more heartbeat (the hand-off's TTL counts from the hand-off, on the
 * server, rather than from the entry's deadline, which would mix two machines' clocks): the queue stalls
 * for at most about twice this plus one look. Shorter leases use their own length.
 */
export const QUEUE_HEARTBEAT_MS = 2_000;

/**
 * How long a queue nobody touches lives on. Every live waiter renews it when it joins and at each look at
 * the queue (at least every third of its heartbeat lease), so a queue nobody renewed for this long holds
 * only entries whose heartbeats ran out at least a lease-and-a-half ago: a waiter killed while it stood
 * alone in line (nobody behind it to pop its entry at a hand-off) leaves its queue for no longer than two
 * more heartbeat leases. A waiter stalled for longer than this finds its queue gone and joins again, which
 * is what its dead entry would have cost it anyway.
 */
export const QUEUE_TTL_MS = 2 * QUEUE_HEARTBEAT_MS + 1_000;

/**
 * Defines the locals `queue`, `sharedQueue` (the queue of shaped waiters, see shared-queue.lua.ts),
 * `grants` (the grant channel without its instance), `fenceKey` and `released` (the release channel) of a
 * lock key: the names `RedisKeyLayout` gives them, built inside the script.
 */
export function queueNamesLua(lockKey: string, slotTag: string, prefixLength: string): string {
  const reserved = RESERVED_KEY_PREFIX;
  return `
  local plen = tonumber(${prefixLength})
  local prefix = string.sub(${lockKey}, 1, plen)
  local tagged = '{' .. ${slotTag} .. '}'
  local userKey = string.sub(${lockKey}, plen + 1)
  local queue = prefix .. '${reserved}queue:' .. tagged .. userKey
  local sharedQueue = prefix .. '${reserved}${SHARED_QUEUE_MARK}' .. tagged .. userKey
  local grants = prefix .. '${reserved}granted:' .. tagged
  local fenceKey = prefix .. '${reserved}fence:' .. tagged
  local released = prefix .. '${reserved}released:' .. tagged .. userKey`;
}

export interface HandOffNames {
  /** Lua expressions: the lock key, the caller's clock in µs (digits). */
  readonly lockKey: string;
  readonly clock: string;
  /** `PUBLISH` or `SPUBLISH`. */
  readonly publish: string;
  /**
   * For a queue check: the checking waiter's token and lease (Lua expressions). When the first live
   * entry is its own, the key is granted to it directly, for its whole lease, and nobody is told.
   */
  readonly self?: { readonly token: string; readonly leaseMs: string };
}

/**
 * Lua that hands a free lock key to the first live waiter of the queue (expects the locals of
 * {@link queueNamesLua}): entries are popped until one whose heartbeat deadline has not passed on the
 * caller's clock; that waiter gets the key with a fresh fencing token and a TTL of its hand-off TTL, in the
 * same step, and is told on its instance's grant channel (`g|waiter|fence|proof`, see {@link grantProof}).
 * Sets `handedTo` to the token
 * the key went to (nil when the queue held nobody alive) and `handedFence` to its fencing token.
 */
export function handOffLua(names: HandOffNames): string {
  const announced = announceGrantLua(names.publish, { queue: 'queue', grants: 'grants', ...SERVED_ENTRY });
  const grant = names.self
    ? `if token == ${names.self.token} then
        redis.call('SET', ${names.lockKey}, 'q' .. token .. '|' .. fence .. '|' .. holder, 'PX', ${names.self.leaseMs})
      else
        redis.call('SET', ${names.lockKey}, 'q' .. token .. '|' .. fence .. '|' .. holder, 'PX', ttl)${announced}
      end`
    : `redis.call('SET', ${names.lockKey}, 'q' .. token .. '|' .. fence .. '|' .. holder, 'PX', ttl)${announced}`;
  return `
  local handedTo, handedFence
  local now = math.floor(tonumber(${names.clock}) / 1000)
  local entry = redis.call('LPOP', queue)
  while entry do
    local written, ttl, instance, waiter, token, holder = string.match(entry, '${QUEUE_ENTRY_PATTERN}')
    if written and tonumber(written) / 1000 + tonumber(ttl) >= now then
      ${nextFenceLua('fenceKey', names.clock)}
      ${grant}
      handedTo, handedFence = token, fence
      break
    end
    entry = redis.call('LPOP', queue)
  end`;
}

/** Lua expressions naming a grant to announce: the queue it was served from, and the entry served. */
export interface AnnouncedGrant {
  readonly queue: string;
  /** The slot's grant channel without the instance. */
  readonly grants: string;
  /** The served entry's fields, and the fencing token (digits) its grant got. */
  readonly instance: string;
  readonly waiter: string;
  readonly token: string;
  readonly fence: string;
}

/** The names the hand-off loops give an entry's fields (`handOffLua`, `sharedHandOffLua`). */
export const SERVED_ENTRY = { instance: 'instance', waiter: 'waiter', token: 'token', fence: 'fence' } as const;

/**
 * Lua that tells a waiter of `grant.queue` the key (or a hold of it) was handed to it, on its instance's
 * grant channel (`g|waiter|fence|proof`, see {@link grantProof}). The queue lives as long as it is used: a
 * waiter that joined with a plain RPUSHX and is handed the key before its first look renews nothing, so its
 * TTL is renewed here now and then, one hand-off in a hundred on average (the millisecond digits of the
 * token ending in 00; the last three count within one).
 */
export function announceGrantLua(publish: string, grant: AnnouncedGrant): string {
  const { queue, grants, instance, waiter, token, fence } = grant;
  return `
      redis.call('${publish}', ${grants} .. ${instance}, 'g|' .. ${waiter} .. '|' .. ${fence} .. '|' .. redis.sha1hex(${token} .. '|' .. ${fence}))
      if string.sub(${fence}, -5, -4) == '00' then redis.call('PEXPIRE', ${queue}, ${QUEUE_TTL_MS}) end`;
}

/**
 * Lua of a waiter's look at `queue` (a queue check): renews its entry (found by `token`) to `renewedEntry`
 * in place, drops its duplicates (a re-sent join) and every entry whose heartbeat ran out on the caller's
 * clock (`clock`, µs), wherever it stands, rather than when a hand-off reaches it or the queue expires
 * (which this very look postpones). Leaves `position`, the waiter's place (1 is first), nil when its entry
 * is gone. Entries of either queue read alike up to the token (see shared-queue.lua.ts).
 */
export function renewEntryLua(queue: string, token: string, renewedEntry: string, clock: string): string {
  return `
local alive = math.floor(tonumber(${clock}) / 1000)
local position
local kept = 0
for _, entry in ipairs(redis.call('LRANGE', ${queue}, 0, -1)) do
  local written, heartbeat, _, _, entryToken = string.match(entry, '${QUEUE_ENTRY_PATTERN}')
  if entryToken == ${token} then
    if position then
      redis.call('LREM', ${queue}, 0, entry)
    else
      redis.call('LSET', ${queue}, kept, ${renewedEntry})
      kept = kept + 1
      position = kept
    end
  elseif written and tonumber(written) / 1000 + tonumber(heartbeat) < alive then
    redis.call('LREM', ${queue}, 0, entry)
  else
    kept = kept + 1
  end
end`;
}

/**
 * Lua of a waiter leaving `queue`: every entry of `token` goes (it is found by its token: the caller may
 * not know which entry a call with an unknown outcome left), and so does every dead one (its heartbeat ran
 * out on the caller's clock, `clock` in µs), as at a queue check.
 */
export function dropEntriesLua(queue: string, token: string, clock: string): string {
  return `
local alive = math.floor(tonumber(${clock}) / 1000)
for _, entry in ipairs(redis.call('LRANGE', ${queue}, 0, -1)) do
  local written, heartbeat, _, _, entryToken = string.match(entry, '${QUEUE_ENTRY_PATTERN}')
  if entryToken == ${token} or (written and tonumber(written) / 1000 + tonumber(heartbeat) < alive) then redis.call('LREM', ${queue}, 0, entry) end
end`;
}

/**
 * Lua that tells the first waiter of `queue` to look again in `delayMs` (Lua expressions, as `grants`, the
 * slot's grant channel without the instance): after a release that keeps the key for its minimum hold, or
 * a force-release.
 */
export function recheckFirstLua(publish: string, delayMs: string, queue: string, grants: string): string {
  return `
  local first = redis.call('LINDEX', ${queue}, 0)
  if first then
    local _, _, instance, waiter = string.match(first, '${QUEUE_ENTRY_PATTERN}')
    if instance then redis.call('${publish}', ${grants} .. instance, 'r|' .. waiter .. '|' .. ${delayMs}) end
  end`;
}

/**
 * What a hand-off message carries besides the fencing token: the SHA1 of `<token>|<fence>`, which the
 * script computes and only the waiter (who knows its token, a secret) can check. Anybody who may publish
 * on the channel can send a message; nobody who cannot read the queue can make one that passes (see
 * docs/security.md). A message that does not pass only wakes the waiter for a look at the key.
 */
export function grantProof(token: string, fencingToken: number): string {
  return createHash('sha1').update(`${token}|${fencingToken}`).digest('hex');
}
