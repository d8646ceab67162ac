import { listenTo, lockValue, micros, queueEntry, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { parseLockValue } from './lock-value';
import { QUEUE_LEAVE_SCRIPT } from './queue-leave.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('queue-leave script', () => {
  const fixture = scriptFixture('queue-leave-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const leave = (lock: ReturnType<typeof fixture.lock>, token: string): Promise<number | undefined> =>
    commands.runScript('acquire', lock.key, QUEUE_LEAVE_SCRIPT, { ...lock, token, clockMicros: micros(), grantChannelBase: lock.grants });
  afterAll(() => fixture.close());

  it('takes every entry of the waiter out of the line, whatever its heartbeat says', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'holder', 1), 'PX', 10_000);
    const other = queueEntry('other');
    await redis.rpush(lock.queueKey, queueEntry('me', { expiresAt: 10_000 }), other, queueEntry('me'));
    expect(await leave(lock, 'me')).toBeUndefined();
    expect(await redis.lrange(lock.queueKey, 0, -1)).toEqual([other]);
  });

  it('reports a hand-off that raced the leaving, with its fencing token, so the caller can keep or release it', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'me', 42), 'PX', 2_000);
    expect(await leave(lock, 'me')).toBe(42);
    expect(parseLockValue((await redis.get(lock.lockKey))!)?.token).toBe('me');
  });

  it('hands a key nobody holds to the first live waiter, so that leaving never stalls the queue', async () => {
    const lock = fixture.lock();
    await redis.rpush(lock.queueKey, queueEntry('me'), queueEntry('next', { instance: 'i1', waiter: 'w1' }));
    const next = await listenTo(`${lock.grants}i1`);
    try {
      const told = next.next();
      expect(await leave(lock, 'me')).toBeUndefined();
      expect(parseLockValue((await redis.get(lock.lockKey))!)?.token).toBe('next');
      expect(await told).toMatch(/^g\|w1\|\d+\|[0-9a-f]{40}$/);
    } finally {
      next.close();
    }
  });
});
