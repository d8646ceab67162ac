import { RedisScript, type RedisClient } from './define-script.js';

/**
 * KEYS[1] lock hash. ARGV[1] release channel, ARGV[2] the fencing token the operator saw ('' for any),
 * ARGV[3] 's' to announce the release with SPUBLISH (see release.script.ts).
 *
 * Deletes the key whoever holds it and wakes its waiters, unless ARGV[2] names another grant than the one
 * holding the key now (compare-and-delete: a holder that took over after the operator looked stays).
 * Returns {taken, fencing token, holder, ttl} of the lock it found, or false when the key was not held.
 */
const script = new RedisScript(`
local fields = redis.pcall('HMGET', KEYS[1], 'f', 'h')
if type(fields) ~= 'table' or not fields[1] then
  return false
end
local ttl = redis.call('PTTL', KEYS[1])
if ARGV[2] ~= '' and fields[1] ~= ARGV[2] then
  return {0, fields[1], fields[2] or '', ttl}
end
redis.call('DEL', KEYS[1])
redis.call(ARGV[3] == 's' and 'SPUBLISH' or 'PUBLISH', ARGV[1], '')
return {1, fields[1], fields[2] or '', ttl}
`);

export interface ForceReleaseReply {
  readonly taken: boolean;
  readonly fencingToken: number;
  readonly holder: string;
  readonly ttlMs: number;
}

export async function forceReleaseScript(
  client: RedisClient,
  lockKey: string,
  channel: string,
  fencingToken: number | undefined,
  sharded: boolean,
): Promise<ForceReleaseReply | null> {
  const expected = fencingToken === undefined ? '' : String(fencingToken);
  const result = (await script.run(client, [lockKey], [channel, expected, sharded ? 's' : ''])) as
    | [number, string, string, number]
    | null;
  return result && { taken: result[0] === 1, fencingToken: Number(result[1]), holder: result[2], ttlMs: result[3] };
}
