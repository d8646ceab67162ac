import type { LockShape } from '../../lock-shape.js';
import { markWaitedForLua } from './lock-value.js';
import { parseAcquireReply, type AcquireInput } from './acquire.script.js';
import { defineScript } from './redis-script.js';
import { keepAtLeastLua, sharedLookLua } from './shared-hold.lua.js';

/** The plain acquire's input (same keys, same fencing counter), and the shape asked for. */
export interface SharedAcquireInput extends AcquireInput {
  readonly shape: LockShape;
}

/**
 * KEYS[1] lock key, KEYS[2] fencing counter. ARGV[1] token, ARGV[2] lease ms, ARGV[3] holder, ARGV[4] the
 * caller's clock in µs, ARGV[5] mode ('r' read, 'w' write, 'p' permit), ARGV[6] permits (for 'p'), or for 'w' how long a
 * writer turned away keeps readers out (ms, at most the lease; 0 not at all).
 *
 * One grant of a read/write lock or a semaphore (state in shared-hold.lua.ts), after dropping the holds
 * whose deadline passed:
 * - a reader is granted while only readers hold the key and no writer waits (writer-preferring: a waiting
 *   writer blocks new readers, so a stream of readers cannot starve it);
 * - a writer is granted when nobody holds the key; turned away, it is recorded as waiting for ARGV[6] ms
 *   (each of its attempts starts that anew, so a writer that died or gave up stops blocking readers then);
 * - a permit is granted while only permit holders hold the key and fewer than ARGV[6] of them: the N of
 *   this call, so a changed N applies from the next grant (holders above a lowered N keep their permits).
 * A grant's fencing token comes from the slot's counter plain grants use, so tokens of the key increase
 * across every mode. A token that holds already (a re-sent acquisition) is granted again with its own
 * token. A plain lock's value at the key (a string) turns every shape away, and is marked so that its
 * release announces itself.
 *
 * Reply as the plain acquire's: the fencing token, or -1 - the time until the next hold ends (0 unknown).
 */
const lua = `
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'hash' and kind ~= 'none' then
  local value = redis.pcall('GET', KEYS[1])${markWaitedForLua('KEYS[1]', 'value')}
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then return 0 end
  return -1 - ttl
end
${sharedLookLua('KEYS[1]', 'KEYS[2]', 'ARGV[4]', 'ARGV[1]')}
if mineFence then return tonumber(mineFence) end
local shape = ARGV[5]
local lease = tonumber(ARGV[2])
if not grantable(shape, tonumber(ARGV[6])) then
  if shape == 'w' then markWaitingWriter(ARGV[1], math.min(tonumber(ARGV[6]), lease)) end
  if not earliest then return 0 end
  return -1 - (earliest - now)
end
local fence = grantHold(ARGV[1], shape, lease, ARGV[3])
${keepAtLeastLua('KEYS[1]', 'ARGV[2]')}
return tonumber(fence)
`;

const MODES = { read: 'r', write: 'w' } as const;

export const SHARED_ACQUIRE_SCRIPT = defineScript({
  lua,
  numKeys: 2,
  keysAndArgs: ({ lockKey, fenceKey, token, leaseMs, holder, clockMicros, shape }: SharedAcquireInput) => [
    lockKey,
    fenceKey,
    token,
    leaseMs,
    holder,
    clockMicros,
    shape.permits === undefined ? MODES[shape.mode] : 'p',
    shape.permits ?? shape.waitingMs ?? leaseMs,
  ],
  parse: parseAcquireReply,
  ownershipToken: (input) => input.token,
});
