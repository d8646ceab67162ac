import { lockValue, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { MARK_WAITED_FOR_SCRIPT } from './mark-waited-for.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('mark-waited-for script', () => {
  const fixture = scriptFixture('mark-waited-for-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  afterAll(() => fixture.close());

  it('marks an unmarked holder as waited for, keeping its TTL, and leaves a queue mark and foreign values alone', async () => {
    const [plain, queued, foreign, missing] = [fixture.lock(), fixture.lock(), fixture.lock(), fixture.lock()];
    await redis.set(plain.lockKey, lockValue('-', 'a', 1), 'PX', 10_000);
    await redis.set(queued.lockKey, lockValue('q', 'b', 1), 'PX', 10_000);
    await redis.set(foreign.lockKey, '-an operator wrote this');
    for (const lock of [plain, queued, foreign, missing]) await commands.runScript('subscribe', lock.key, MARK_WAITED_FOR_SCRIPT, lock);
    expect(await redis.get(plain.lockKey)).toBe(lockValue('w', 'a', 1));
    expect(await redis.pttl(plain.lockKey)).toBeGreaterThan(9_000);
    expect(await redis.get(queued.lockKey)).toBe(lockValue('q', 'b', 1));
    expect(await redis.get(foreign.lockKey)).toBe('-an operator wrote this');
    expect(await redis.exists(missing.lockKey)).toBe(0);
  });
});
