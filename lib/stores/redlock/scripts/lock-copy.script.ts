import { parseLockValue } from '../../redis/scripts/lock-value.js';
import { defineScript } from '../../redis/scripts/redis-script.js';

/** One master's copy of a lock: the lock value's fields and the key's TTL. */
export interface LockCopy {
  readonly token: string;
  readonly fencingToken: number;
  readonly holder: string;
  readonly ttlMs: number;
}

/**
 * KEYS[1] lock key. The value and its TTL in one snapshot, for the runbook's look at the quorum (see
 * redlock-inspection.ts): the Redis store's inspect script leaves out the token, which is what tells one
 * grant's copies from another's. A value of another type (an earlier version's hash, foreign data) is no
 * copy. A script, not MULTI, so the ACL the docs give the library (+@scripting, no @transaction) covers it.
 */
export const LOCK_COPY_SCRIPT = defineScript({
  lua: `
local value = redis.pcall('GET', KEYS[1])
if type(value) ~= 'string' then return false end
return {value, redis.call('PTTL', KEYS[1])}
`,
  numKeys: 1,
  keysAndArgs: (input: { readonly lockKey: string }) => [input.lockKey],
  parse: (reply): LockCopy | null => {
    if (!reply) return null;
    const [value, ttl] = reply as [string, number];
    const parsed = parseLockValue(value);
    if (!parsed || ttl < 0) return null;
    return { token: parsed.token, fencingToken: parsed.fencingToken, holder: parsed.holder, ttlMs: ttl };
  },
});
