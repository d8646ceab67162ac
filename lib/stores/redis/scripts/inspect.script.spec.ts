import { listenTo, lockValue, queueEntry, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { FORCE_RELEASE_SCRIPT } from './force-release.script';
import { INSPECT_SCRIPT } from './inspect.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('inspect and force-release scripts', () => {
  const fixture = scriptFixture('inspect-script');
  const { redis, layout } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const inspect = (lockKey: string) => commands.runScript('inspect', lockKey, INSPECT_SCRIPT, { lockKey });
  afterAll(() => fixture.close());

  it('read holder, fencing token and TTL in either format: this version’s string and an earlier version’s hash', async () => {
    const [current, old, foreign] = [fixture.lock(), fixture.lock(), fixture.lock()];
    await redis.set(current.lockKey, lockValue('w', 'a', 1_780_000_000_000_123, 'pod|1'), 'PX', 10_000);
    await redis.multi().hset(old.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(old.lockKey, 10_000).exec();
    await redis.set(foreign.lockKey, 'hello');
    expect(await inspect(current.lockKey)).toMatchObject({ fencingToken: 1_780_000_000_000_123, holder: 'pod|1' });
    expect(await inspect(old.lockKey)).toMatchObject({ fencingToken: 9, holder: 'old-pod' });
    expect(await inspect(foreign.lockKey)).toBeNull();
  });

  it('force-release either format, compare the fencing token, and tell the fair queue’s first waiter to look again', async () => {
    const [current, old] = [fixture.lock(), fixture.lock()];
    await redis.set(current.lockKey, lockValue('q', 'a', 5), 'PX', 10_000);
    await redis.rpush(current.queueKey, queueEntry('next', { instance: 'i1', waiter: 'w1' }));
    await redis.multi().hset(old.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(old.lockKey, 10_000).exec();
    const call = (lock: ReturnType<typeof fixture.lock>, fencingToken?: number) =>
      commands.runScript('force-release', lock.key, FORCE_RELEASE_SCRIPT, { lockKey: lock.lockKey, fencingToken, slotTag: lock.tag, prefixLength: layout.prefixLength });
    const first = await listenTo(`${current.grants}i1`);
    try {
      expect(await call(current, 4)).toMatchObject({ taken: false, fencingToken: 5 });
      const told = first.next();
      expect(await call(current, 5)).toMatchObject({ taken: true, fencingToken: 5 });
      expect(await told).toBe('r|w1|0');
      expect(await call(old)).toMatchObject({ taken: true, fencingToken: 9, holder: 'old-pod' });
      expect(await redis.exists(current.lockKey, old.lockKey)).toBe(0);
    } finally {
      first.close();
    }
  });
});
