import { lockValue, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { RENEW_MANY_SCRIPT } from './renew-many.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('renew-many script', () => {
  const fixture = scriptFixture('renew-many-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  afterAll(() => fixture.close());

  it('renews the keys that hold their token, whatever the flag, and nothing else (prefix tokens, old hashes, missing keys)', async () => {
    const [plain, queued, prefix, old, missing] = [fixture.lock(), fixture.lock(), fixture.lock(), fixture.lock(), fixture.lock()];
    await redis.set(plain.lockKey, lockValue('-', 'a', 1), 'PX', 1_000);
    await redis.set(queued.lockKey, lockValue('q', 'b', 1), 'PX', 1_000);
    await redis.set(prefix.lockKey, lockValue('-', 'c1', 1), 'PX', 1_000);
    await redis.multi().hset(old.lockKey, 't', 'd', 'f', '1', 'h', 'x').pexpire(old.lockKey, 1_000).exec();
    const entries = [
      { lockKey: plain.lockKey, token: 'a', leaseMs: 60_000 },
      { lockKey: queued.lockKey, token: 'b', leaseMs: 60_000 },
      { lockKey: prefix.lockKey, token: 'c', leaseMs: 60_000 },
      { lockKey: old.lockKey, token: 'd', leaseMs: 60_000 },
      { lockKey: missing.lockKey, token: 'e', leaseMs: 60_000 },
    ];
    const replies = await commands.runScript('renew', 'batch', RENEW_MANY_SCRIPT, entries);
    expect(replies).toEqual(['renewed', 'renewed', 'not-ours', 'not-ours', 'not-ours']);
    expect(await redis.pttl(plain.lockKey)).toBeGreaterThan(50_000);
    expect(await redis.pttl(prefix.lockKey)).toBeGreaterThan(0);
    expect(await redis.pttl(prefix.lockKey)).toBeLessThanOrEqual(1_000);
    expect(await redis.exists(missing.lockKey)).toBe(0);
  });

  it('renews the token’s own hold in a read/write lock or semaphore hash, never an expired one, and keeps the key alive as long', async () => {
    const shared = fixture.lock();
    const far = Date.now() + 1_000;
    await redis
      .multi()
      .hset(shared.lockKey, 'm', 'r', '#live', `${far}|5|host:1`, '#dead', `1|4|host:2`)
      .pexpire(shared.lockKey, 1_000)
      .exec();
    const replies = await commands.runScript('renew', 'batch', RENEW_MANY_SCRIPT, [
      { lockKey: shared.lockKey, token: 'live', leaseMs: 60_000 },
      { lockKey: shared.lockKey, token: 'dead', leaseMs: 60_000 },
      { lockKey: shared.lockKey, token: 'nobody', leaseMs: 60_000 },
    ]);
    expect(replies).toEqual(['renewed', 'not-ours', 'not-ours']);
    const [deadline, rest] = (await redis.hget(shared.lockKey, '#live'))!.split(/\|(.*)/) as [string, string];
    expect(Number(deadline)).toBeGreaterThan(far + 50_000);
    expect(rest).toBe('5|host:1');
    expect(await redis.hget(shared.lockKey, '#dead')).toBe('1|4|host:2');
    expect(await redis.pttl(shared.lockKey)).toBeGreaterThan(50_000);
  });
});
