import { listenTo, lockValue, queueEntry, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { forceReleaseScript } from './force-release.script';
import { inspectScript } from './inspect.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('inspect and force-release scripts', () => {
  const fixture = scriptFixture('inspect-script');
  const { redis, layout } = fixture;
  afterAll(() => fixture.close());

  it('read holder, fencing token and TTL in either format: this version’s string and an earlier version’s hash', async () => {
    const [current, old, foreign] = [fixture.lock(), fixture.lock(), fixture.lock()];
    await redis.set(current.lockKey, lockValue('w', 'a', 1_780_000_000_000_123, 'pod|1'), 'PX', 10_000);
    await redis.multi().hset(old.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(old.lockKey, 10_000).exec();
    await redis.set(foreign.lockKey, 'hello');
    expect(await inspectScript(redis, current.lockKey)).toMatchObject({ fencingToken: 1_780_000_000_000_123, holder: 'pod|1' });
    expect(await inspectScript(redis, old.lockKey)).toMatchObject({ fencingToken: 9, holder: 'old-pod' });
    expect(await inspectScript(redis, foreign.lockKey)).toBeNull();
  });

  it('force-release either format, compare the fencing token, and tell the fair queue’s first waiter to look again', async () => {
    const [current, old] = [fixture.lock(), fixture.lock()];
    await redis.set(current.lockKey, lockValue('q', 'a', 5), 'PX', 10_000);
    await redis.rpush(current.queueKey, queueEntry('next', { instance: 'i1', waiter: 'w1' }));
    await redis.multi().hset(old.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(old.lockKey, 10_000).exec();
    const call = (lock: ReturnType<typeof fixture.lock>, fencingToken?: number) =>
      forceReleaseScript(redis, { lockKey: lock.lockKey, fencingToken, slotTag: lock.tag, prefixLength: layout.prefixLength, sharded: false });
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
