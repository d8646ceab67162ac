import { nextFenceLua } from './fence.lua.js';
import { recheckFirstLua } from './queue.lua.js';

/**
 * Lua shared by the scripts that keep read/write locks and semaphores (see shared-acquire.script.ts), all of
 * one lock key's state in one hash at the lock key itself, so a Cluster node serves it whole (one key, one
 * slot) and one expiry bounds it:
 *
 *     m          the mode of the holders: 'r' readers, 'w' one writer, 'p' permit holders
 *     #<token>   a holder:          <deadline ms>|<fence>|<holder>
 *     ~<token>   a waiting writer:  <deadline ms>
 *     q          '1' while shaped waiters may stand in the key's queue (`fair: true`, see shared-queue.lua.ts):
 *                a release looks at the queue only then, so a release where nobody queues costs nothing more
 *
 * Deadlines are the server's clock (`TIME`), so every client ages the holds alike; the key's own expiry is
 * kept at or past the latest deadline in it, so a hash whose holders all died goes away by itself. A plain
 * lock's value is a string at the same key: a plain lock and a shared one on one key exclude each other,
 * and the plain scripts read a hash as somebody else's (see lock-value.ts).
 *
 * Release and renewal of a shared hold go through the plain release and renew scripts, which turn here
 * (and to shared-release.lua.ts) when the key holds a hash (their plain path is unchanged): a lease is
 * released and renewed by its token whatever its shape, so the watchdog's one batch renews every kind of
 * lease. With `fair: true`, shaped waiters queue beside the hash (see shared-queue.lua.ts).
 */

/** Lua: `now`, the server's clock in ms. */
export const SERVER_NOW_LUA = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)`;

/** Lua: makes `key` live at least `ms` more (never shortens it: other holds may run longer). */
export function keepAtLeastLua(key: string, ms: string): string {
  return `
local pttl = redis.call('PTTL', ${key})
if pttl < tonumber(${ms}) then redis.call('PEXPIRE', ${key}, ${ms}) end`;
}

/**
 * Lua: reads the hash at `key` once, drops holders and waiting writers whose deadline passed (expired
 * holds come back here, inside the script that may grant them again), and tallies the rest: `mode`,
 * `holders`, `writers` (waiting), `earliest` (the first deadline among holders, else among waiting
 * writers: when the next look may find it changed), `latest` (the last deadline), `queueMarked` (the `q`
 * field), `holding` (a set of the live holders' fields). Needs `now`.
 */
export function sharedStateLua(key: string): string {
  return `
local fields = redis.call('HGETALL', ${key})
local mode
local queueMarked = false
local holding = {}
local holders, writers, latest = 0, 0, 0
local earliestHolder, earliestWriter
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  local kind = string.sub(name, 1, 1)
  if kind == '#' or kind == '~' then
    local deadline = tonumber(string.match(value, '^(%d+)'))
    if deadline <= now then
      redis.call('HDEL', ${key}, name)
    else
      if deadline > latest then latest = deadline end
      if kind == '#' then
        holders = holders + 1
        holding[name] = true
        if not earliestHolder or deadline < earliestHolder then earliestHolder = deadline end
      else
        writers = writers + 1
        if not earliestWriter or deadline < earliestWriter then earliestWriter = deadline end
      end
    end
  elseif name == 'q' then
    queueMarked = true
  elseif name == 'm' then
    mode = value
  end
end
local earliest = earliestHolder or earliestWriter`;
}

/**
 * Lua functions that grant holds by the state {@link sharedStateLua} tallied (expects its locals and `now`),
 * shared by every script that grants one: a direct grant, and a hand-off to the waiters of the shared
 * queue (see shared-queue.lua.ts). Both read and update `mode`, `holders` and `earliest` as they go, so a
 * script that grants several holds in one step counts each one.
 *
 * - `grantable(shape, n)`: whether one more hold in `shape` may be granted now ('r', 'w', or 'p' with the
 *   `n` permits of the call asking). A reader while only readers hold the key and no writer waits
 *   (writer-preferring: `writers` counts the turned-away writers' marks); a writer when nobody holds it; a
 *   permit while only permit holders hold it, fewer than `n` of them.
 * - `grantHold(token, shape, ttl, holder)`: grants it, with a fencing token from the slot's counter at
 *   `fenceKey` (the one plain grants use) and a deadline `ttl` ms from now; returns the token (digits), or
 *   nil when `token` holds already (a re-sent join, queued twice, meeting its own grant: never granted
 *   twice, nor its deadline cut to a hand-off's), which takes no fencing token. The caller keeps the key's
 *   expiry at or past the deadline.
 * - `markWaitingWriter(token, waitingMs)`: records a writer turned away as waiting for `waitingMs` (0: not
 *   at all), which keeps new readers out for that long (each of its attempts starts it anew, so a writer
 *   that died or gave up stops blocking readers then); its grant clears it.
 */
export function sharedGrantLua(lockKey: string, fenceKey: string, clock: string): string {
  return `
local function grantable(shape, n)
  if shape == 'p' and n < 1 then return false end
  if holders == 0 then return shape ~= 'r' or writers == 0 end
  if mode ~= shape then return false end
  if shape == 'r' then return writers == 0 end
  return shape == 'p' and holders < n
end
local function grantHold(token, shape, ttl, holder)
  local field = '#' .. token
  if holding[field] then return nil end
  ${nextFenceLua(fenceKey, clock)}
  local deadline = now + ttl
  local hold = string.format('%.0f', deadline) .. '|' .. fence .. '|' .. holder
  if holders == 0 then
    -- Nobody holds, and the mode is set in the same write.
    redis.call('HSET', ${lockKey}, 'm', shape, field, hold)
    mode = shape
  else
    redis.call('HSET', ${lockKey}, field, hold)
  end
  holding[field] = true
  holders = holders + 1
  if not earliest or deadline < earliest then earliest = deadline end
  if shape == 'w' then redis.call('HDEL', ${lockKey}, '~' .. token) end
  return fence
end
local function markWaitingWriter(token, waiting)
  if waiting <= 0 then return end
  redis.call('HSET', ${lockKey}, '~' .. token, string.format('%.0f', now + waiting))
  ${keepAtLeastLua(lockKey, 'waiting')}
  if not earliest or now + waiting < earliest then earliest = now + waiting end
end`;
}

/**
 * Lua: how every script that may grant a shared hold at `lockKey` starts: `now`, the state
 * ({@link sharedStateLua}), the grant functions ({@link sharedGrantLua}), and `mineFence`, the fencing
 * token (digits) of the live hold `token` has there already (a second delivery of a grant whose reply was
 * lost, a hand-off whose message was missed), nil when it has none.
 */
export function sharedLookLua(lockKey: string, fenceKey: string, clock: string, token: string): string {
  return `${SERVER_NOW_LUA}
${sharedStateLua(lockKey)}
${sharedGrantLua(lockKey, fenceKey, clock)}
local mine = redis.call('HGET', ${lockKey}, '#' .. ${token})
local mineFence = mine and string.match(mine, '^%d+|(%d+)|')`;
}

/**
 * Lua: the caller's own live hold (`mine`, found by {@link sharedLookLua}) lasts at least `leaseMs` (a Lua
 * expression) from now, and the key with it. For a waiter's join or look that finds itself holding already:
 * a hand-off (one heartbeat long) to an entry of an earlier call of its wait, whose reply was lost or
 * whose clean-up never answered. The caller counts a whole lease from its own send time, which precedes
 * this script, so the hold must last that long; it is alive (it asks), so a hold of its lease is no
 * longer than a grant of its own would be. Never shortens a hold.
 */
export function keepMineLua(lockKey: string, token: string, leaseMs: string): string {
  return `
local mineDeadline, mineRest = string.match(mine, '^(%d+)(|.*)$')
if tonumber(mineDeadline) < now + tonumber(${leaseMs}) then
  redis.call('HSET', ${lockKey}, '#' .. ${token}, string.format('%.0f', now + tonumber(${leaseMs})) .. mineRest)
end
${keepAtLeastLua(lockKey, leaseMs)}`;
}

/**
 * Lua function `renewShared(key, token, leaseMs)`: 1 when `token` holds a live hold at `key` (now pushed
 * to `leaseMs` from now), 0 otherwise (missing, expired, or not a shared lock). Never creates a hold.
 */
export const RENEW_SHARED_LUA = `
local function renewShared(key, token, leaseMs)
  local held = redis.pcall('HGET', key, '#' .. token)
  if type(held) ~= 'string' then return 0 end
  ${SERVER_NOW_LUA}
  local deadline, rest = string.match(held, '^(%d+)(|.*)$')
  if tonumber(deadline) <= now then return 0 end
  redis.call('HSET', key, '#' .. token, string.format('%.0f', now + tonumber(leaseMs)) .. rest)
  ${keepAtLeastLua('key', 'leaseMs')}
  return 1
end`;

/**
 * Lua: the runbook's force-release of a shared lock at `KEYS[1]` (ARGV[1] the fencing token the operator
 * saw, '' for every hold; the names of `queueNamesLua`, built by the caller). The first waiter of the
 * shared queue, if any, is told to look again at once: its look hands the freed holds on. With a token, only
 * the hold granted under it goes; without, the whole lock. Replies as the force-release script: {taken,
 * fence, holder, ttl} of the hold taken (or, when the token names no live hold, of the first live one), or
 * false when nothing lives there.
 */
export function forceReleaseSharedLua(publish: string): string {
  return `
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return false end
${SERVER_NOW_LUA}
local fields = redis.call('HGETALL', KEYS[1])
local first, picked
local marked = 0
for i = 1, #fields, 2 do
  if fields[i] == 'q' then marked = 1 end
  if string.sub(fields[i], 1, 1) == '#' then
    local deadline, fence, holder = string.match(fields[i + 1], '^(%d+)|(%d+)|(.*)$')
    if deadline and tonumber(deadline) > now then
      local hold = {fields[i], fence, holder, tonumber(deadline) - now}
      first = first or hold
      if not picked and (ARGV[1] == '' or ARGV[1] == fence) then picked = hold end
    end
  end
end
if not first then return false end
if not picked then return {0, first[2], first[3], first[4]} end
if ARGV[1] == '' or redis.call('HLEN', KEYS[1]) <= 2 + marked then
  redis.call('DEL', KEYS[1])
else
  redis.call('HDEL', KEYS[1], picked[1])
end
redis.call('${publish}', released, '')
${recheckFirstLua(publish, '0', 'sharedQueue', 'grants')}
return {1, picked[2], picked[3], picked[4]}`;
}
