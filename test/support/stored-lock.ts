import type { Redis } from 'ioredis';
import { parseLockValue } from '../../lib/stores/redis/scripts/lock-value';

/**
 * What the Redis store wrote at a lock key, read directly (for drills and checks that look at a server
 * behind the library's back): the lock value's fields, or those of an earlier version's hash.
 */
export async function storedLock(redis: Redis, redisKey: string): Promise<{ token: string; fencingToken: string; holder: string } | undefined> {
  if ((await redis.type(redisKey)) === 'hash') {
    const { t, f, h } = await redis.hgetall(redisKey);
    return t === undefined || f === undefined ? undefined : { token: t, fencingToken: f, holder: h ?? '' };
  }
  const value = await redis.get(redisKey);
  const parsed = value === null ? undefined : parseLockValue(value);
  return parsed && { token: parsed.token, fencingToken: String(parsed.fencingToken), holder: parsed.holder };
}

/** The fencing token stored at a lock key, as its digits (null when the key holds no lock). */
export async function storedFence(redis: Redis, redisKey: string): Promise<string | null> {
  return (await storedLock(redis, redisKey))?.fencingToken ?? null;
}
