import { lockStateLua } from './lock-state.lua.js';
import { defineScript } from './redis-script.js';

/** What a lock key holds, as the runbook shows it. */
export interface LockState {
  readonly fencingToken: number;
  readonly holder: string;
  readonly ttlMs: number;
}

/**
 * KEYS[1] lock key. Reads holder, fencing token and TTL in one consistent snapshot, in either format (see
 * lock-value.ts); a value this library did not write reads as no lock.
 */
export const INSPECT_SCRIPT = defineScript({
  lua: `${lockStateLua('KEYS[1]')}
if not fence then return false end
return {fence, holder, redis.call('PTTL', KEYS[1])}
`,
  numKeys: 1,
  keysAndArgs: (input: { readonly lockKey: string }) => [input.lockKey],
  parse: (reply): LockState | null => {
    const result = reply as [string, string, number] | null;
    return result && { fencingToken: Number(result[0]), holder: result[1], ttlMs: result[2] };
  },
});
