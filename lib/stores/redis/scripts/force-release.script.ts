import { RedisScript, type RedisClient } from './define-script.js';

/**
 * KEYS[1] lock hash. ARGV[1] release channel. Deletes the key whoever holds it and wakes its waiters;
 * returns the fencing token and holder it took away, for the operator's record. Only the runbook uses it.
 */
const script = new RedisScript(`
local fields = redis.call('HMGET', KEYS[1], 'f', 'h')
if not fields[1] then
  return false
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], '')
return {fields[1], fields[2] or ''}
`);

export async function forceReleaseScript(
  client: RedisClient,
  lockKey: string,
  channel: string,
): Promise<{ fencingToken: number; holder: string } | null> {
  const result = (await script.run(client, [lockKey], [channel])) as [string, string] | null;
  return result && { fencingToken: Number(result[0]), holder: result[1] };
}
