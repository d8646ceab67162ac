import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../lib/index';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { parseLockValue } from '../../lib/stores/redis/scripts/lock-value';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

/**
 * `fair: true`: an instance that has not found a key queued makes one plain attempt before it queues (the
 * uncontended acquisition is then one script call, as without `fair`). That attempt must never overtake a
 * waiter already in line, also one of another instance it knows nothing of, on a key that is free for the
 * moment (the holder's lease ran out and the first waiter has not looked yet).
 */
describe('fair queue: the first attempt of an instance that never saw the key queued', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  let app: LockApp;

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true });
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  it('does not take a free key while a live waiter of another instance stands in line, and leaves no entry when its wait ends', async () => {
    const { queueKey } = layout.queueNames(layout.lockKey('order:7'));
    // Another pod's waiter, first in line, alive for the whole test (a heartbeat lease of a minute: a 2 s
    // one could run out on a loaded box before our first look, and a dead entry is rightly skipped).
    const ahead = `${Date.now() * 1000}|60000|otherpod|1|other-token|pod-b`;
    await redis.rpush(queueKey, ahead);
    await redis.pexpire(queueKey, 300_000);

    await expect(app.locks.acquire('order:7', { waitMs: 300 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    // Never ours: the free key went to the waiter ahead (the look our waiter took on leaving handed it on),
    // and nothing of ours is left in the line.
    const value = await redis.get(layout.lockKey('order:7'));
    expect(value === null || parseLockValue(value)?.token === 'other-token').toBe(true);
    expect((await redis.lrange(queueKey, 0, -1)).filter((entry) => entry !== ahead)).toEqual([]);
    await redis.del(queueKey, layout.lockKey('order:7'));
  });

  it('queues behind the waiter it could not see, and is granted once that one is gone', async () => {
    const { queueKey } = layout.queueNames(layout.lockKey('order:8'));
    const ahead = `${Date.now() * 1000}|60000|otherpod|1|other-token|pod-b`;
    await redis.rpush(queueKey, ahead);
    await redis.pexpire(queueKey, 300_000);

    const waiting = app.locks.acquire('order:8', { waitMs: 10_000 });
    // Turned away by the line, it joined it: second, behind the other pod's waiter.
    while ((await redis.llen(queueKey)) < 2) await new Promise((resolve) => setImmediate(resolve));
    // Never ours while the other pod's waiter stands first: a look of ours may already have handed the free
    // key to it (the hand-off a releaser would make).
    const [[, before], [, line]] = (await redis.multi().get(layout.lockKey('order:8')).lrange(queueKey, 0, -1).exec()) as [[null, string | null], [null, string[]]];
    if (before === null) expect(line[0]).toBe(ahead);
    else expect(parseLockValue(before)?.token).toBe('other-token');
    // The waiter ahead gives up, and gives back what it was handed, in one step (a look of ours may come
    // between any two commands): the key is ours at our next look.
    const giveUp = `redis.call('LREM', KEYS[1], 1, ARGV[1])
      local value = redis.call('GET', KEYS[2])
      if value and string.find(value, ARGV[2], 1, true) then redis.call('DEL', KEYS[2]) end`;
    await redis.eval(giveUp, 2, queueKey, layout.lockKey('order:8'), ahead, 'other-token|');
    const lease = await waiting;
    expect(lease.held).toBe(true);
    await lease.release();
    expect(await redis.exists(queueKey, layout.lockKey('order:8'))).toBe(0);
  });
});
