import { heldByLua } from './lock-value.js';
import { RENEW_SHARED_LUA } from './shared-hold.lua.js';
import { defineScript } from './redis-script.js';

/**
 * True when `value` (a lock key's value, see lock-value.ts; false for a missing key, an error table for a
 * value of another type) carries `token`.
 */
const OWNED_BY = `
local function owned(value, token)
  return type(value) == 'string' and ${heldByLua('value', 'token')}
end${RENEW_SHARED_LUA}`;

/**
 * KEYS[i] lock keys; ARGV[2i-1] token and ARGV[2i] lease ms for KEYS[i].
 *
 * One call renews a whole batch, which is what keeps the watchdog's traffic at one command per interval.
 * PEXPIRE only ever touches an existing key whose token matches, so a renewal can neither re-create a
 * released key nor extend somebody else's. A value this library did not write (WRONGTYPE included) is not
 * ours. A hash at a key is a read/write lock or a semaphore (WRONGTYPE for GET): the token's own hold in it
 * is renewed (see shared-hold.lua.ts), off the plain path.
 */
const singleNodeLua = `${OWNED_BY}
local renewed = {}
for i, key in ipairs(KEYS) do
  local value = redis.pcall('GET', key)
  if owned(value, ARGV[2 * i - 1]) then
    redis.call('PEXPIRE', key, ARGV[2 * i])
    renewed[i] = 1
  elseif type(value) == 'table' then
    renewed[i] = renewShared(key, ARGV[2 * i - 1], ARGV[2 * i])
  else
    renewed[i] = 0
  end
end
return renewed
`;

export interface RenewEntry {
  readonly lockKey: string;
  readonly token: string;
  readonly leaseMs: number;
}

/** One renewal's answer: renewed, not (or no longer) ours, or not served by the node that was asked. */
export type RenewReply = 'renewed' | 'not-ours' | 'elsewhere';

const REPLIES: Record<number, RenewReply> = { 0: 'not-ours', 1: 'renewed', 2: 'elsewhere' };

function parseRenewReplies(reply: unknown): RenewReply[] {
  return (reply as number[]).map((value) => REPLIES[value]!);
}

/**
 * Declares every key, so on a Cluster all entries must share one hash slot. The 3n keys and arguments of a
 * batch of up to 1000 leases are one array, built in one pass.
 */
export const RENEW_MANY_SCRIPT = defineScript({
  lua: singleNodeLua,
  numKeys: (entries: readonly RenewEntry[]) => entries.length,
  keysAndArgs: (entries: readonly RenewEntry[]) => {
    const n = entries.length;
    const keysAndArgs = new Array<string | number>(3 * n);
    for (let i = 0; i < n; i++) {
      const entry = entries[i]!;
      keysAndArgs[i] = entry.lockKey;
      keysAndArgs[n + 2 * i] = entry.token;
      keysAndArgs[n + 2 * i + 1] = entry.leaseMs;
    }
    return keysAndArgs;
  },
  parse: parseRenewReplies,
});

/**
 * KEYS[1] one of the lock keys (it routes the call to its node); ARGV[3i-2] lock key, ARGV[3i-1] token,
 * ARGV[3i] lease ms, for every entry.
 *
 * The Cluster form: one call per node, not per hash slot. Redis 7's `allow-cross-slot-keys` lets a script
 * touch keys of several slots as long as the node serves them all; the keys beyond the routing one are
 * passed as arguments, since declared keys must share one slot. A key the node does not serve (its slot
 * moved since the client last looked) answers 2, "elsewhere": unknown, retried after a slot refresh. A
 * foreign value at a lock key (WRONGTYPE) is simply not ours, as in the single-node script.
 */
const nodeLua = `#!lua flags=allow-cross-slot-keys${OWNED_BY}
local renewed = {}
for i = 1, #ARGV, 3 do
  local value = redis.pcall('GET', ARGV[i])
  if type(value) == 'table' and value.err and not string.find(value.err, '^WRONGTYPE') then
    renewed[#renewed + 1] = 2
  elseif owned(value, ARGV[i + 1]) then
    redis.call('PEXPIRE', ARGV[i], ARGV[i + 2])
    renewed[#renewed + 1] = 1
  elseif type(value) == 'table' then
    renewed[#renewed + 1] = renewShared(ARGV[i], ARGV[i + 1], ARGV[i + 2])
  else
    renewed[#renewed + 1] = 0
  end
end
return renewed
`;

/** All entries should live on one Cluster node (the one serving the first entry's slot). */
export const RENEW_ON_NODE_SCRIPT = defineScript({
  lua: nodeLua,
  numKeys: 1,
  keysAndArgs: (entries: readonly RenewEntry[]) => {
    const keysAndArgs = new Array<string | number>(1 + 3 * entries.length);
    keysAndArgs[0] = entries[0]!.lockKey;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      keysAndArgs[1 + 3 * i] = entry.lockKey;
      keysAndArgs[2 + 3 * i] = entry.token;
      keysAndArgs[3 + 3 * i] = entry.leaseMs;
    }
    return keysAndArgs;
  },
  parse: parseRenewReplies,
});
