import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

/**
 * `fair: true`: a pod that held a key and had a waiter queued for it is SIGKILLed. Its lease and its
 * waiter's heartbeat run out, but the queue list has a TTL of its own. A single attempt (`tryAcquire`,
 * `waitMs: 0`, a cron job's `onLocked: 'skip'`) on the free key must not be refused because of a queue of
 * dead waiters (it was, for up to the queue's TTL: 20 of 20 attempts over 10 s).
 */
describe('fair queue: a free key whose queue holds only dead waiters', () => {
  const prefix = testPrefix(__filename);
  const redis = new Redis(redisUrl());
  let app: LockApp;

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true });
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  it('is granted to a single attempt, and the dead queue goes', async () => {
    const { queueKey } = new RedisKeyLayout(prefix).queueNames(`${prefix}job:tick`);
    // What the killed pod's waiter left: an entry whose 2 s heartbeat ran out 10 s ago, in a living list.
    const longAgoMicros = (Date.now() - 12_000) * 1000;
    await redis.rpush(queueKey, `${longAgoMicros}|2000|deadpod|1|dead-token|pod-b`);
    await redis.pexpire(queueKey, 300_000);

    const lease = await app.locks.tryAcquire('job:tick');
    expect(lease).not.toBeNull();
    expect(await redis.exists(queueKey)).toBe(0);
    await lease!.release();
  });

  it('is still refused to a single attempt while a live waiter stands in line', async () => {
    const { queueKey } = new RedisKeyLayout(prefix).queueNames(`${prefix}job:busy`);
    await redis.rpush(queueKey, `${Date.now() * 1000}|2000|livepod|1|live-token|pod-c`);
    await redis.pexpire(queueKey, 300_000);
    expect(await app.locks.tryAcquire('job:busy')).toBeNull();
    await redis.del(queueKey);
  });
});
