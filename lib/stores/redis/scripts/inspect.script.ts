import { RedisScript, type RedisClient } from './define-script.js';

/**
 * KEYS[1] lock hash. Reads holder, fencing token and TTL in one consistent snapshot; a foreign value at the
 * key reads as no lock.
 */
const script = new RedisScript(`
local fields = redis.pcall('HMGET', KEYS[1], 'f', 'h')
if type(fields) ~= 'table' or not fields[1] then
  return false
end
return {fields[1], fields[2] or '', redis.call('PTTL', KEYS[1])}
`);

export async function inspectScript(
  client: RedisClient,
  lockKey: string,
): Promise<{ fencingToken: number; holder: string; ttlMs: number } | null> {
  const result = (await script.run(client, [lockKey], [])) as [string, string, number] | null;
  if (!result) return null;
  return { fencingToken: Number(result[0]), holder: result[1], ttlMs: result[2] };
}
