import { listenTo, micros, queueEntry, scriptFixture, sharedHold } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { SHARED_QUEUE_LEAVE_SCRIPT } from './shared-queue-leave.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('shared queue-leave script', () => {
  const fixture = scriptFixture('shared-queue-leave');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  type Lock = ReturnType<typeof fixture.lock>;
  const leave = (lock: Lock, token: string): Promise<number | undefined> =>
    commands.runScript('acquire', lock.key, SHARED_QUEUE_LEAVE_SCRIPT, {
      lockKey: lock.lockKey,
      fenceKey: lock.fenceKey,
      queueKey: lock.sharedQueueKey,
      token,
      clockMicros: micros(),
      grantChannelBase: lock.grants,
    });
  afterAll(() => fixture.close());

  it('takes every entry of the waiter out of line, and the dead ones', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(1)).pexpire(lock.lockKey, 60_000).exec();
    const other = queueEntry('other', { shape: 'p1' });
    await redis.rpush(lock.sharedQueueKey, queueEntry('me', { shape: 'p1' }), queueEntry('dead', { shape: 'p1', expiresAt: Date.now() - 1 }), other, queueEntry('me', { shape: 'p1' }));
    expect(await leave(lock, 'me')).toBeUndefined();
    expect(await redis.lrange(lock.sharedQueueKey, 0, -1)).toEqual([other]);
  });

  it('reports a hold handed over while the waiter was leaving, with its fencing token', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#me', sharedHold(42)).pexpire(lock.lockKey, 60_000).exec();
    expect(await leave(lock, 'me')).toBe(42);
    expect(await redis.hexists(lock.lockKey, '#me')).toBe(1);
  });

  it('serves the queue behind the one leaving: a waiter it blocked gets the free permit, so leaving never stalls the line', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(1)).pexpire(lock.lockKey, 60_000).exec();
    // The one leaving asked for 1 permit (one holder: no room for it); the one behind asks for 2.
    await redis.rpush(lock.sharedQueueKey, queueEntry('me', { shape: 'p1' }), queueEntry('next', { shape: 'p2', instance: 'i1', waiter: '9' }));
    const next = await listenTo(`${lock.grants}i1`);
    try {
      const told = next.next();
      expect(await leave(lock, 'me')).toBeUndefined();
      expect(await redis.hexists(lock.lockKey, '#next')).toBe(1);
      expect(await told).toMatch(/^g\|9\|\d+\|[0-9a-f]{40}$/);
      expect(await redis.exists(lock.sharedQueueKey)).toBe(0);
    } finally {
      next.close();
    }
  });
});
