import { listenTo, micros, queueEntry, scriptFixture, sharedHold } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import type { QueueCheckReply } from './queue-check.script';
import { grantProof } from './queue.lua';
import { SHARED_QUEUE_CHECK_SCRIPT } from './shared-queue-check.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('shared queue-check script', () => {
  const fixture = scriptFixture('shared-queue-check');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  type Lock = ReturnType<typeof fixture.lock>;
  const check = (lock: Lock, token: string, renewedEntry: string): Promise<QueueCheckReply> =>
    commands.runScript('acquire', lock.key, SHARED_QUEUE_CHECK_SCRIPT, {
      lockKey: lock.lockKey,
      fenceKey: lock.fenceKey,
      queueKey: lock.sharedQueueKey,
      token,
      renewedEntry,
      clockMicros: micros(),
      leaseMs: 10_000,
      grantChannelBase: lock.grants,
    });
  const holdPermits = (lock: Lock, holds: Record<string, string>) =>
    redis.multi().hset(lock.lockKey, 'm', 'p', ...Object.entries(holds).flat()).pexpire(lock.lockKey, 60_000).exec();
  afterAll(() => fixture.close());

  it('renews the waiter’s entry in place, drops its duplicates and dead entries, and says when the next hold ends', async () => {
    const lock = fixture.lock();
    await holdPermits(lock, { '#a': sharedHold(1, Date.now() + 20_000), '#b': sharedHold(2, Date.now() + 5_000) });
    const ahead = queueEntry('ahead', { shape: 'p2' });
    const stale = queueEntry('me', { shape: 'p2', expiresAt: Date.now() + 100 });
    await redis.rpush(lock.sharedQueueKey, queueEntry('dead', { shape: 'p2', expiresAt: Date.now() - 1 }), ahead, stale, stale);
    const renewed = queueEntry('me', { shape: 'p2' });
    const reply = await check(lock, 'me', renewed);
    expect(reply).toMatchObject({ status: 'waiting', position: 2 });
    if (reply.status === 'waiting') expect(reply.holderTtlMs).toBeLessThanOrEqual(5_000);
    expect(await redis.lrange(lock.sharedQueueKey, 0, -1)).toEqual([ahead, renewed]);
    // Holders granted after the waiter joined (their hash unmarked) serve the queue from now on.
    expect(await redis.hget(lock.lockKey, 'q')).toBe('1');
  });

  it('reports a waiter no longer in line as gone', async () => {
    const lock = fixture.lock();
    await holdPermits(lock, { '#a': sharedHold(1) });
    expect(await check(lock, 'me', queueEntry('me', { shape: 'p1' }))).toEqual({ status: 'gone' });
  });

  it('finds a hold handed over whose message was missed, and its entry goes; the hold now lasts the whole lease', async () => {
    // The waiter counts from this look's send time: when the hand-off came is not known (a join re-sent, or
    // retried after a stall, may have stood in line behind an entry of its own that was handed the hold).
    const lock = fixture.lock();
    await holdPermits(lock, { '#me': sharedHold(77, Date.now() + 2_000) });
    await redis.rpush(lock.sharedQueueKey, queueEntry('me', { shape: 'p2' }), queueEntry('other', { shape: 'p2' }));
    const sentAt = Date.now();
    expect(await check(lock, 'me', queueEntry('me', { shape: 'p2' }))).toEqual({ status: 'granted', fencingToken: 77 });
    expect(await redis.llen(lock.sharedQueueKey)).toBe(1);
    expect(Number((await redis.hget(lock.lockKey, '#me'))!.split('|')[0])).toBeGreaterThanOrEqual(sentAt + 10_000);
  });

  it('grants the waiter a permit freed by a crashed holder when it stands first, for its whole lease', async () => {
    const lock = fixture.lock();
    await holdPermits(lock, { '#crashed': sharedHold(1, Date.now() - 1) });
    await redis.rpush(lock.sharedQueueKey, queueEntry('me', { shape: 'p1' }));
    const reply = await check(lock, 'me', queueEntry('me', { shape: 'p1' }));
    expect(reply).toMatchObject({ status: 'granted' });
    expect(Object.keys(await redis.hgetall(lock.lockKey)).sort()).toEqual(['#me', 'm']);
    expect(Number((await redis.hget(lock.lockKey, '#me'))!.split('|')[0]) - Date.now()).toBeGreaterThan(9_000);
    expect(await redis.exists(lock.sharedQueueKey)).toBe(0);
  });

  it('hands freed permits to every live waiter ahead that fits, telling only them, and stays in line behind them', async () => {
    const lock = fixture.lock();
    await holdPermits(lock, { '#a': sharedHold(1), '#gone1': sharedHold(2, Date.now() - 1), '#gone2': sharedHold(3, Date.now() - 1) });
    await redis.rpush(
      lock.sharedQueueKey,
      queueEntry('w1', { shape: 'p3', instance: 'i1', waiter: '1' }),
      queueEntry('w2', { shape: 'p3', instance: 'i2', waiter: '2' }),
      queueEntry('me', { shape: 'p3' }),
    );
    const [one, two] = await Promise.all([listenTo(`${lock.grants}i1`), listenTo(`${lock.grants}i2`)]);
    try {
      const told = [one.next(), two.next()];
      expect(await check(lock, 'me', queueEntry('me', { shape: 'p3' }))).toMatchObject({ status: 'waiting', position: 1 });
      const fences = await Promise.all(['w1', 'w2'].map(async (token) => Number((await redis.hget(lock.lockKey, `#${token}`))!.split('|')[1])));
      expect(fences[1]).toBeGreaterThan(fences[0]!);
      expect(await Promise.all(told)).toEqual([`g|1|${fences[0]}|${grantProof('w1', fences[0]!)}`, `g|2|${fences[1]}|${grantProof('w2', fences[1]!)}`]);
    } finally {
      one.close();
      two.close();
    }
  });

  it('never grants a waiter twice: a duplicate entry of one that holds already is dropped, its hold untouched', async () => {
    const lock = fixture.lock();
    const held = sharedHold(5, Date.now() + 30_000);
    await holdPermits(lock, { '#twice': held });
    await redis.rpush(lock.sharedQueueKey, queueEntry('twice', { shape: 'p3' }), queueEntry('me', { shape: 'p3' }));
    expect(await check(lock, 'me', queueEntry('me', { shape: 'p3' }))).toMatchObject({ status: 'granted' });
    expect(await redis.hget(lock.lockKey, '#twice')).toBe(held);
  });
});
