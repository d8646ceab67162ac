import { heldByLua } from '../../redis/scripts/lock-value.js';
import { defineScript } from '../../redis/scripts/redis-script.js';

export interface QuorumFenceInput {
  readonly lockKey: string;
  /** The master's fencing counter of the lock key's hash slot (`RedisKeyLayout.fenceKey`). */
  readonly fenceKey: string;
  readonly token: string;
  /** The grant's fencing token: the highest any granting master issued in the first phase. */
  readonly fencingToken: number;
}

/**
 * KEYS[1] lock key, KEYS[2] the slot's fencing counter. ARGV[1] token, ARGV[2] the grant's fencing token.
 *
 * The second phase of a Redlock grant (see redlock-grant.ts): where the key still holds our token, writes
 * the grant's token into the lock value (flag, holder and TTL kept: KEEPTTL, Redis 6) and raises the
 * master's counter to it, never lowering it. Token-checked, so it lands only while our key is there: a
 * later contender's SET NX on this master, which reads the counter in the same script (the Redis store's
 * acquire), comes after it and issues a higher token. 1 written, 0 the key is not (or no longer) ours.
 */
const lua = `
local value = redis.pcall('GET', KEYS[1])
if type(value) ~= 'string' or not ${heldByLua('value', 'ARGV[1]')} then return 0 end
local holder = string.match(value, '^%d+|(.*)$', #ARGV[1] + 3)
if not holder then return 0 end
redis.call('SET', KEYS[1], string.sub(value, 1, #ARGV[1] + 2) .. ARGV[2] .. '|' .. holder, 'KEEPTTL')
local last = redis.call('GET', KEYS[2])
if not last or tonumber(last) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
`;

export const QUORUM_FENCE_SCRIPT = defineScript({
  lua,
  numKeys: 2,
  keysAndArgs: (input: QuorumFenceInput) => [input.lockKey, input.fenceKey, input.token, String(input.fencingToken)],
  parse: (reply): boolean => reply === 1,
  ownershipToken: (input) => input.token,
});
