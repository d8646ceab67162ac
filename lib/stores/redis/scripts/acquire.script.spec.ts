import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../redis-key-layout';
import { acquireScript } from './acquire.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('acquire script', () => {
  const layout = new RedisKeyLayout(`t:acquire-script:${process.pid}:`);
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  afterAll(() => redis.disconnect());

  it('writes and returns fencing tokens near 2^53 exactly, digit for digit', async () => {
    const lockKey = layout.lockKey('big-fence');
    const fenceKey = layout.fenceKey(lockKey);
    const start = Number.MAX_SAFE_INTEGER - 10; // 9007199254740981: far past the µs clock, so INCR wins
    await redis.set(fenceKey, String(start));
    const granted = await acquireScript(redis, lockKey, fenceKey, 'token', 10_000, 'test');
    expect(granted).toEqual({ acquired: true, fencingToken: start + 1 });
    expect(await redis.hget(lockKey, 'f')).toBe(String(start + 1));
    await redis.del(lockKey, fenceKey);
  });

  it('stores a clock-derived token (µs since 1970, ~1.8e15) as its full integer digits', async () => {
    const lockKey = layout.lockKey('clock-fence');
    const fenceKey = layout.fenceKey(lockKey);
    await redis.del(fenceKey);
    const granted = await acquireScript(redis, lockKey, fenceKey, 'token', 10_000, 'test');
    if (!granted.acquired) throw new Error('key should be free');
    expect(granted.fencingToken).toBeGreaterThan(1e15);
    expect(await redis.hget(lockKey, 'f')).toBe(String(granted.fencingToken));
    expect(await redis.get(fenceKey)).toBe(String(granted.fencingToken));
    // Why the script does not use tostring: Redis' Lua prints numbers with %.14g, which drops digits here.
    expect(await redis.eval('return tostring(tonumber(ARGV[1]))', 0, String(granted.fencingToken))).toMatch(/e\+15$/);
    await redis.del(lockKey, fenceKey);
  });
});
