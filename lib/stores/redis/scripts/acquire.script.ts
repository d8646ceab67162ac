import { RedisScript, type RedisClient } from './define-script.js';
import type { AcquireResult } from '../../lock-store.interface.js';

/**
 * KEYS[1] lock hash, KEYS[2] fencing counter of the lock key's hash slot.
 * ARGV[1] token, ARGV[2] lease ms, ARGV[3] holder description.
 *
 * A key already holding our token means this acquisition was granted before and its reply was lost (ioredis
 * re-sends unanswered commands after a reconnect): it is granted again with the same fencing token.
 *
 * The fencing token is a hybrid clock: max(counter + 1, server time in µs). The counter makes it strictly
 * increasing even if the server clock steps back; the clock makes it keep increasing if the counter is lost
 * (async failover, eviction, FLUSHALL), as long as the new primary's clock is not behind the old one.
 *
 * Numbers: Lua 5.1 numbers are doubles, exact for integers below 2^53 (µs since 1970 are ~1.8e15, good for
 * two more centuries). Writing one into Redis must not go through `tostring` (`%.14g`: 1.8e15 becomes
 * "1.8e+15") nor `%d` (a C `long`: 32 bits on some builds); `%.0f` prints the double's exact integer digits.
 */
const script = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.pcall('HGET', KEYS[1], 't') == ARGV[1] then
    return {1, tonumber(redis.call('HGET', KEYS[1], 'f'))}
  end
  return {0, redis.call('PTTL', KEYS[1])}
end
local now = redis.call('TIME')
local micros = tonumber(now[1]) * 1000000 + tonumber(now[2])
local fence = redis.call('INCR', KEYS[2])
if fence < micros then
  fence = micros
  redis.call('SET', KEYS[2], string.format('%.0f', fence))
end
redis.call('HSET', KEYS[1], 't', ARGV[1], 'f', string.format('%.0f', fence), 'h', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, fence}
`);

function toResult([granted, value]: [number, number]): AcquireResult {
  return granted === 1 ? { acquired: true, fencingToken: value } : { acquired: false, ttlMs: value };
}

export async function acquireScript(
  client: RedisClient,
  lockKey: string,
  fenceKey: string,
  token: string,
  leaseMs: number,
  holder: string,
): Promise<AcquireResult> {
  return toResult((await script.run(client, [lockKey, fenceKey], [token, leaseMs, holder])) as [number, number]);
}

/** The same, followed by `WAIT replicas timeoutMs`: the grant and how many replicas have it. */
export async function acquireAcknowledgedScript(
  client: RedisClient,
  lockKey: string,
  fenceKey: string,
  token: string,
  leaseMs: number,
  holder: string,
  replicas: number,
  timeoutMs: number,
): Promise<{ result: AcquireResult; acknowledged: number }> {
  const { reply, acknowledged } = await script.runAcknowledged(client, [lockKey, fenceKey], [token, leaseMs, holder], replicas, timeoutMs);
  return { result: toResult(reply as [number, number]), acknowledged };
}
