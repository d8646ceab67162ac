import { listenTo, lockValue, micros, queueEntry, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { parseLockValue } from './lock-value';
import { QUEUE_CHECK_SCRIPT, type QueueCheckReply } from './queue-check.script';
import { grantProof } from './queue.lua';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('queue-check script', () => {
  const fixture = scriptFixture('queue-check-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const check = (lock: ReturnType<typeof fixture.lock>, token: string, renewedEntry: string): Promise<QueueCheckReply> =>
    commands.runScript('acquire', lock.key, QUEUE_CHECK_SCRIPT, { ...lock, token, renewedEntry, clockMicros: micros(), leaseMs: 10_000, grantChannelBase: lock.grants });
  afterAll(() => fixture.close());

  it('renews the waiter’s heartbeat in place, drops duplicates of it, and reports its place and the holder’s TTL', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'holder', 1), 'PX', 10_000);
    const ahead = queueEntry('ahead');
    await redis.rpush(lock.queueKey, ahead, queueEntry('me', { expiresAt: 10_000 }), queueEntry('me', { expiresAt: 10_000 }));
    const renewed = queueEntry('me', { expiresAt: Date.now() + 5_000 });
    const reply = await check(lock, 'me', renewed);
    expect(reply).toMatchObject({ status: 'waiting', position: 2 });
    expect(reply.status === 'waiting' && reply.holderTtlMs).toBeGreaterThan(9_000);
    expect(await redis.lrange(lock.queueKey, 0, -1)).toEqual([ahead, renewed]);
  });

  it('reports a waiter that is no longer in line as gone', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'holder', 1), 'PX', 10_000);
    expect(await check(lock, 'me', queueEntry('me'))).toEqual({ status: 'gone' });
  });

  it('finds a hand-off whose message was missed: the key holds the waiter’s token (and its entry goes), now for its whole lease', async () => {
    // The waiter counts from this look's send time: when the hand-off came is not known (a join re-sent, or
    // retried after a stall, may have stood in line behind an entry of its own that was handed the key).
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'me', 77), 'PX', 2_000);
    await redis.rpush(lock.queueKey, queueEntry('me'), queueEntry('other'));
    expect(await check(lock, 'me', queueEntry('me'))).toEqual({ status: 'granted', fencingToken: 77 });
    expect((await redis.lrange(lock.queueKey, 0, -1)).some((entry) => entry.includes('|me|'))).toBe(false);
    expect(await redis.pttl(lock.lockKey)).toBeGreaterThan(9_000);
  });

  it('gives a key nobody holds to the waiter when it is the first one alive, for its whole lease', async () => {
    const lock = fixture.lock();
    await redis.set(lock.fenceKey, '10');
    await redis.rpush(lock.queueKey, queueEntry('dead', { expiresAt: Date.now() - 1 }), queueEntry('me'));
    const reply = await check(lock, 'me', queueEntry('me'));
    expect(reply).toMatchObject({ status: 'granted' });
    expect(parseLockValue((await redis.get(lock.lockKey))!)).toMatchObject({ flag: 'q', token: 'me' });
    expect(await redis.pttl(lock.lockKey)).toBeGreaterThan(9_000);
    expect(await redis.exists(lock.queueKey)).toBe(0);
  });

  it('hands a key nobody holds to the first live waiter ahead, and tells only it', async () => {
    const lock = fixture.lock();
    await redis.rpush(lock.queueKey, queueEntry('ahead', { instance: 'i1', waiter: 'w1' }), queueEntry('me'));
    const ahead = await listenTo(`${lock.grants}i1`);
    try {
      const told = ahead.next();
      expect(await check(lock, 'me', queueEntry('me'))).toMatchObject({ status: 'waiting', position: 1 });
      const stored = parseLockValue((await redis.get(lock.lockKey))!);
      expect(stored).toMatchObject({ flag: 'q', token: 'ahead' });
      // The fencing token and its proof: the SHA1 of the waiter's token and the fence, which only the store sends.
      expect(await told).toBe(`g|w1|${stored!.fencingToken}|${grantProof('ahead', stored!.fencingToken)}`);
    } finally {
      ahead.close();
    }
  });

  it('marks a holder that was granted past the queue, so that its release hands over', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('-', 'holder', 1), 'PX', 10_000);
    await redis.rpush(lock.queueKey, queueEntry('me'));
    await check(lock, 'me', queueEntry('me'));
    expect(parseLockValue((await redis.get(lock.lockKey))!)?.flag).toBe('q');
  });
});
