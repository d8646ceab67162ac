import type { RedisClient } from '../connection/redis-client.js';
import { RedisScript } from './define-script.js';
import { lockStateLua } from './lock-state.lua.js';

/**
 * KEYS[1] lock key. Reads holder, fencing token and TTL in one consistent snapshot, in either format (see
 * lock-value.ts); a value this library did not write reads as no lock.
 */
const script = new RedisScript(`${lockStateLua('KEYS[1]')}
if not fence then return false end
return {fence, holder, redis.call('PTTL', KEYS[1])}
`);

export async function inspectScript(
  client: RedisClient,
  lockKey: string,
): Promise<{ fencingToken: number; holder: string; ttlMs: number } | null> {
  const result = (await script.run(client, [lockKey], [])) as [string, string, number] | null;
  if (!result) return null;
  return { fencingToken: Number(result[0]), holder: result[1], ttlMs: result[2] };
}
