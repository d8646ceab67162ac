import { lockValue, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../../redis/commands/redis-commands';
import { createRedisConnection } from '../../redis/connection/redis-client.factory';
import { LOCK_COPY_SCRIPT } from './lock-copy.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('lock copy script', () => {
  const fixture = scriptFixture('lock-copy-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const copy = (lockKey: string) => commands.runScript('inspect', lockKey, LOCK_COPY_SCRIPT, { lockKey });
  afterAll(() => fixture.close());

  it('reads token, fencing token, holder and TTL of a lock value, and nothing of a missing key, a hash or foreign data', async () => {
    const [held, missing, hash, foreign] = [fixture.lock(), fixture.lock(), fixture.lock(), fixture.lock()];
    await redis.set(held.lockKey, lockValue('w', 'tok', 1_780_000_000_000_123, 'pod|1'), 'PX', 10_000);
    await redis.multi().hset(hash.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(hash.lockKey, 10_000).exec();
    await redis.set(foreign.lockKey, 'hello', 'PX', 10_000);
    const found = await copy(held.lockKey);
    expect(found).toMatchObject({ token: 'tok', fencingToken: 1_780_000_000_000_123, holder: 'pod|1' });
    expect(found!.ttlMs).toBeGreaterThan(9_000);
    expect(await copy(missing.lockKey)).toBeNull();
    expect(await copy(hash.lockKey)).toBeNull();
    expect(await copy(foreign.lockKey)).toBeNull();
  });
});
