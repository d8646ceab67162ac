import { RedisScript, type RedisClient } from './define-script.js';

/**
 * KEYS[1] lock hash. ARGV[1] token, ARGV[2] keep ms, ARGV[3] release channel, ARGV[4] 's' to announce the
 * release with SPUBLISH (sharded pub/sub) instead of PUBLISH.
 *
 * With keep ms > 0 the key is not deleted but left to expire after that long (minimum hold), and nobody is
 * woken because the key is still taken. Otherwise the key goes and waiters on the channel are woken. The
 * channel lives in the lock key's hash slot, so SPUBLISH (or a managed service that turns PUBLISH into it)
 * never makes the script cross slots.
 */
const script = new RedisScript(`
if redis.pcall('HGET', KEYS[1], 't') ~= ARGV[1] then
  return 0
end
local keep = tonumber(ARGV[2])
if keep > 0 then
  redis.call('PEXPIRE', KEYS[1], keep)
  return 1
end
redis.call('DEL', KEYS[1])
redis.call(ARGV[4] == 's' and 'SPUBLISH' or 'PUBLISH', ARGV[3], '')
return 1
`);

export async function releaseScript(
  client: RedisClient,
  lockKey: string,
  token: string,
  keepMs: number,
  channel: string,
  sharded: boolean,
): Promise<boolean> {
  return (await script.run(client, [lockKey], [token, keepMs, channel, sharded ? 's' : ''])) === 1;
}
