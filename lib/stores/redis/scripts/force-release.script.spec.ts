import { Redis } from 'ioredis';
import { listenTo, lockValue, queueEntry, scriptFixture, sharedHold } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { FORCE_RELEASE_SCRIPT } from './force-release.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('force-release script', () => {
  const fixture = scriptFixture('force-release-script');
  const { redis, layout } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const sharded = new RedisCommands(createRedisConnection(redis, { shardedPubSub: true }), 5_000);
  type Lock = ReturnType<typeof fixture.lock>;
  const forceRelease = (lock: Lock, fencingToken?: number, through = commands) =>
    through.runScript('force-release', lock.key, FORCE_RELEASE_SCRIPT, {
      lockKey: lock.lockKey,
      fencingToken,
      slotTag: lock.tag,
      prefixLength: layout.prefixLength,
    });
  afterAll(() => fixture.close());

  it('takes either format away, compares the fencing token, and tells the fair queue’s first waiter to look again', async () => {
    const [current, old] = [fixture.lock(), fixture.lock()];
    await redis.set(current.lockKey, lockValue('q', 'a', 5), 'PX', 10_000);
    await redis.rpush(current.queueKey, queueEntry('next', { instance: 'i1', waiter: 'w1' }));
    await redis.multi().hset(old.lockKey, 't', 'b', 'f', '9', 'h', 'old-pod').pexpire(old.lockKey, 10_000).exec();
    const first = await listenTo(`${current.grants}i1`);
    try {
      expect(await forceRelease(current, 4)).toMatchObject({ taken: false, fencingToken: 5 });
      expect(await redis.exists(current.lockKey)).toBe(1);
      const told = first.next();
      expect(await forceRelease(current, 5)).toMatchObject({ taken: true, fencingToken: 5 });
      expect(await told).toBe('r|w1|0');
      expect(await forceRelease(old)).toMatchObject({ taken: true, fencingToken: 9, holder: 'old-pod' });
      expect(await redis.exists(current.lockKey, old.lockKey)).toBe(0);
    } finally {
      first.close();
    }
  });

  it('takes a permit away and tells the first waiter of the shaped queue to look again, whose look takes it', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(5), '#b', sharedHold(6)).pexpire(lock.lockKey, 10_000).exec();
    await redis.rpush(lock.sharedQueueKey, queueEntry('next', { shape: 'p2', instance: 'i1', waiter: 'w1' }));
    const first = await listenTo(`${lock.grants}i1`);
    try {
      const told = first.next();
      expect(await forceRelease(lock, 5)).toMatchObject({ taken: true, fencingToken: 5 });
      expect(await told).toBe('r|w1|0');
    } finally {
      first.close();
    }
  });

  it('reports a key that holds no lock (missing, or a value this library did not write) and leaves it as it is', async () => {
    const [missing, foreign] = [fixture.lock(), fixture.lock()];
    await redis.set(foreign.lockKey, 'hello');
    expect(await forceRelease(missing)).toBeNull();
    expect(await forceRelease(foreign)).toBeNull();
    expect(await redis.get(foreign.lockKey)).toBe('hello');
  });

  it('reports the holder it took the key from, with the TTL it had, and wakes the waiters on the release channel', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('w', 'a', 7, 'pod-7'), 'PX', 10_000);
    const channel = await listenTo(lock.releaseChannel);
    try {
      const heard = channel.next();
      const reply = await forceRelease(lock);
      expect(reply).toMatchObject({ taken: true, fencingToken: 7, holder: 'pod-7' });
      expect(reply!.ttlMs).toBeGreaterThan(9_000);
      await heard;
      expect(await redis.exists(lock.lockKey)).toBe(0);
    } finally {
      channel.close();
    }
  });

  it('announces with SPUBLISH on a connection that uses sharded pub/sub', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('w', 'a', 1), 'PX', 10_000);
    const subscriber = new Redis(process.env.REDIS_URL!);
    const plain = await listenTo(lock.releaseChannel);
    try {
      // Bounded, so that a wrong build fails the test instead of leaving it waiting with a connection open.
      const heard = new Promise((resolve) => {
        subscriber.once('smessage', resolve);
        setTimeout(() => resolve('nothing heard'), 2_000).unref();
      });
      await subscriber.ssubscribe(lock.releaseChannel);
      expect(await forceRelease(lock, undefined, sharded)).toMatchObject({ taken: true });
      expect(await heard).toBe(lock.releaseChannel);
      expect(plain.messages).toEqual([]);
    } finally {
      plain.close();
      subscriber.disconnect();
    }
  });
});
