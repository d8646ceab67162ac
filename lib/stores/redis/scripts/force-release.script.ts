import { lockStateLua } from './lock-state.lua.js';
import { queueNamesLua, recheckFirstLua } from './queue.lua.js';
import { defineScript, publishingLua } from './redis-script.js';
import { forceReleaseSharedLua } from './shared-hold.lua.js';

/**
 * KEYS[1] lock key. ARGV[1] the fencing token the operator saw ('' for any), ARGV[2] the slot tag of the
 * lock key's hash slot, ARGV[3] length of the key prefix.
 *
 * Deletes the key whoever holds it (either format, see lock-value.ts) and wakes its waiters: those
 * retrying on notifications through the release channel, and the first one of the fair queue, if any,
 * which looks again at once and takes the key. Unless ARGV[1] names another grant than the one holding the
 * key now (compare-and-delete: a holder that took over after the operator looked stays). Returns {taken,
 * fencing token, holder, ttl} of the lock it found, or false when the key was not held. A read/write lock
 * or a semaphore (a hash, see shared-hold.lua.ts) loses the hold granted under ARGV[1], or every hold.
 */
function forceReleaseLua(publish: string): string {
  return `${lockStateLua('KEYS[1]')}
if not fence then
  ${queueNamesLua('KEYS[1]', 'ARGV[2]', 'ARGV[3]')}
  ${forceReleaseSharedLua(publish)}
end
local ttl = redis.call('PTTL', KEYS[1])
if ARGV[1] ~= '' and fence ~= ARGV[1] then
  return {0, fence, holder, ttl}
end
redis.call('DEL', KEYS[1])
${queueNamesLua('KEYS[1]', 'ARGV[2]', 'ARGV[3]')}
redis.call('${publish}', released, '')
${recheckFirstLua(publish, '0', 'queue', 'grants')}
return {1, fence, holder, ttl}
`;
}

export interface ForceReleaseInput {
  readonly lockKey: string;
  /** The fencing token the operator saw; undefined for whoever holds the key. */
  readonly fencingToken: number | undefined;
  /** The slot tag of the lock key's hash slot (see `RedisKeyLayout.slotTag`). */
  readonly slotTag: string;
  /** Length of the key prefix in bytes (see `RedisKeyLayout.prefixLength`). */
  readonly prefixLength: number;
}

/** The lock the script found: taken away, or left because it is held under another fencing token. */
export interface ForceReleaseReply {
  readonly taken: boolean;
  readonly fencingToken: number;
  readonly holder: string;
  readonly ttlMs: number;
}

export const FORCE_RELEASE_SCRIPT = defineScript({
  lua: publishingLua(forceReleaseLua),
  numKeys: 1,
  keysAndArgs: (input: ForceReleaseInput) => [
    input.lockKey,
    input.fencingToken === undefined ? '' : String(input.fencingToken),
    input.slotTag,
    input.prefixLength,
  ],
  parse: (reply): ForceReleaseReply | null => {
    const result = reply as [number, string, string, number] | null;
    return result && { taken: result[0] === 1, fencingToken: Number(result[1]), holder: result[2], ttlMs: result[3] };
  },
});
