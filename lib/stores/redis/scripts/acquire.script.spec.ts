import { Redis } from 'ioredis';
import type { AcquireResult } from '../../lock-store.interface';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { RedisKeyLayout } from '../redis-key-layout';
import { ACQUIRE_SCRIPT, type AcquireInput } from './acquire.script';
import { parseLockValue } from './lock-value';

type AcquireCall = AcquireInput & { readonly clockMicros: number };

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('acquire script', () => {
  const layout = new RedisKeyLayout(`t:acquire-script:${process.pid}:`);
  const NOW_MICROS = 1_780_000_000_000_000;
  let redis: Redis;
  let commands: RedisCommands;
  const acquire = (c: AcquireCall): Promise<AcquireResult> => commands.runScript('acquire', c.lockKey, ACQUIRE_SCRIPT, c);
  let n = 0;
  const call = (overrides: Partial<AcquireCall> = {}): AcquireCall => {
    const lockKey = layout.lockKey(`k${++n}`);
    return { lockKey, fenceKey: layout.fenceKey(lockKey), token: `token-${n}`, leaseMs: 10_000, holder: 'host:1', clockMicros: NOW_MICROS, ...overrides };
  };
  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL!);
    commands = new RedisCommands(createRedisConnection(redis), 5_000);
  });
  afterEach(async () => {
    const keys = await redis.keys(`${layout.lockKey('')}*`);
    if (keys.length > 0) await redis.del(...keys);
  });
  afterAll(() => redis.disconnect());

  it('grants a free key in one SET with its TTL, the fencing token and the holder in the value', async () => {
    const c = call();
    expect(await acquire(c)).toEqual({ acquired: true, fencingToken: NOW_MICROS });
    expect(parseLockValue((await redis.get(c.lockKey))!)).toEqual({ flag: '-', token: c.token, fencingToken: NOW_MICROS, holder: 'host:1' });
    expect(await redis.pttl(c.lockKey)).toBeGreaterThan(9_000);
    expect(await redis.get(c.fenceKey)).toBe(String(NOW_MICROS));
  });

  it('issues counter + 1 when the clock is not ahead of the counter: strictly increasing if a clock steps back', async () => {
    const first = call();
    await acquire(first);
    const second = call({ fenceKey: first.fenceKey, clockMicros: NOW_MICROS - 5_000_000 });
    expect(await acquire(second)).toEqual({ acquired: true, fencingToken: NOW_MICROS + 1 });
    expect(await redis.get(first.fenceKey)).toBe(String(NOW_MICROS + 1));
  });

  it('issues counter + 1 when the clock equals the counter: two instances granting in the same µs get different tokens', async () => {
    const first = call();
    expect(await acquire(first)).toEqual({ acquired: true, fencingToken: NOW_MICROS });
    const second = call({ fenceKey: first.fenceKey, clockMicros: NOW_MICROS });
    expect(await acquire(second)).toEqual({ acquired: true, fencingToken: NOW_MICROS + 1 });
    expect(await redis.get(first.fenceKey)).toBe(String(NOW_MICROS + 1));
  });

  it('jumps to the clock when the counter was lost (FLUSHALL, failover): later grants still carry larger tokens', async () => {
    const first = call();
    await acquire(first);
    await redis.del(first.fenceKey);
    const later = call({ fenceKey: first.fenceKey, clockMicros: NOW_MICROS + 3_000_000 });
    expect(await acquire(later)).toEqual({ acquired: true, fencingToken: NOW_MICROS + 3_000_000 });
  });

  it('writes and returns fencing tokens near 2^53 exactly, digit for digit', async () => {
    const c = call();
    const start = Number.MAX_SAFE_INTEGER - 10; // 9007199254740981: far past any clock, so the counter wins
    await redis.set(c.fenceKey, String(start));
    expect(await acquire(c)).toEqual({ acquired: true, fencingToken: start + 1 });
    expect(parseLockValue((await redis.get(c.lockKey))!)?.fencingToken).toBe(start + 1);
    expect(await redis.get(c.fenceKey)).toBe(String(start + 1));
    // Why the script never uses tostring: Redis' Lua prints numbers with %.14g, which drops digits here.
    expect(await redis.eval('return tostring(tonumber(ARGV[1]))', 0, String(start + 1))).toMatch(/e\+15$/);
  });

  it('grants a second delivery of the same acquisition (its reply was lost) again, with the same fencing token', async () => {
    const c = call();
    const granted = await acquire(c);
    expect(await acquire({ ...c, clockMicros: NOW_MICROS + 1_000 })).toEqual(granted);
  });

  it('denies a held key with the holder’s TTL and marks the value so its release wakes the waiters', async () => {
    const c = call();
    await acquire(c);
    const denied = await acquire({ ...c, token: 'someone-else' });
    expect(denied.acquired).toBe(false);
    expect(denied.acquired || denied.ttlMs).toBeGreaterThan(9_000);
    expect(parseLockValue((await redis.get(c.lockKey))!)).toMatchObject({ flag: 'w', token: c.token });
  });

  it('does not take a token that is a prefix of the holder’s for the holder’s', async () => {
    const c = call({ token: 'abc' });
    await acquire({ ...c, token: 'abcd' });
    expect((await acquire(c)).acquired).toBe(false);
  });

  it('reads a lock of an earlier version (a hash) and any foreign value as held, and leaves both as they are', async () => {
    const old = call();
    await redis.multi().hset(old.lockKey, 't', 'old-token', 'f', '7', 'h', 'old-host').pexpire(old.lockKey, 10_000).exec();
    expect((await acquire(old)).acquired).toBe(false);
    expect(await redis.hgetall(old.lockKey)).toEqual({ t: 'old-token', f: '7', h: 'old-host' });

    const foreign = call();
    await redis.set(foreign.lockKey, '-an operator wrote this');
    expect((await acquire(foreign)).acquired).toBe(false);
    expect(await redis.get(foreign.lockKey)).toBe('-an operator wrote this');
  });
});
