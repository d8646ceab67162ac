import type { LockShapeName } from '../../lock-shape.js';
import { defineScript } from './redis-script.js';
import { SERVER_NOW_LUA } from './shared-hold.lua.js';

/** One live hold of a read/write lock or a semaphore, as the runbook shows it. */
export interface SharedHoldState {
  readonly fencingToken: number;
  readonly holder: string;
  readonly ttlMs: number;
  readonly shape: LockShapeName;
}

const SHAPES: Record<string, LockShapeName> = { r: 'read', w: 'write', p: 'permits' };

/**
 * KEYS[1] lock key. Every live hold of the hash a read/write lock or a semaphore keeps there (see
 * shared-hold.lua.ts), in one snapshot: mode, then fence, holder and remaining ms per hold, in field
 * order. Anything else at the key (a plain lock, nothing) reads as no shared hold. Changes nothing.
 */
export const INSPECT_SHARED_SCRIPT = defineScript({
  lua: `
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return {} end
${SERVER_NOW_LUA}
local fields = redis.call('HGETALL', KEYS[1])
local mode = redis.call('HGET', KEYS[1], 'm') or ''
local reply = {mode}
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 1) == '#' then
    local deadline, fence, holder = string.match(fields[i + 1], '^(%d+)|(%d+)|(.*)$')
    if deadline and tonumber(deadline) > now then
      reply[#reply + 1] = fence
      reply[#reply + 1] = holder
      reply[#reply + 1] = tonumber(deadline) - now
    end
  end
end
return reply
`,
  numKeys: 1,
  keysAndArgs: (input: { readonly lockKey: string }) => [input.lockKey],
  parse: (reply): SharedHoldState[] => {
    const [mode, ...rest] = reply as [string, ...Array<string | number>];
    const shape = SHAPES[mode ?? ''];
    const holds: SharedHoldState[] = [];
    if (!shape) return holds;
    for (let i = 0; i + 2 < rest.length; i += 3) {
      holds.push({ fencingToken: Number(rest[i]), holder: String(rest[i + 1]), ttlMs: Number(rest[i + 2]), shape });
    }
    return holds;
  },
});
