import { lockValue, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { INSPECT_SCRIPT } from './inspect.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('inspect script', () => {
  const fixture = scriptFixture('inspect-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const inspect = (lockKey: string) => commands.runScript('inspect', lockKey, INSPECT_SCRIPT, { lockKey });
  afterAll(() => fixture.close());

  it('reads holder, fencing token and TTL in either format: this version’s string and an earlier version’s hash', async () => {
    const [current, old, foreign] = [fixture.lock(), fixture.lock(), fixture.lock()];
    await redis.set(current.lockKey, lockValue('w', 'a', 1_780_000_000_000_123, 'pod|1'), 'PX', 10_000);
    await redis.multi().hset(old.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(old.lockKey, 10_000).exec();
    await redis.set(foreign.lockKey, 'hello');
    expect(await inspect(current.lockKey)).toMatchObject({ fencingToken: 1_780_000_000_000_123, holder: 'pod|1' });
    expect(await inspect(old.lockKey)).toMatchObject({ fencingToken: 9, holder: 'old-pod' });
    expect(await inspect(foreign.lockKey)).toBeNull();
  });
});
