import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

describe('fencing tokens', () => {
  let a: LockApp;
  let b: LockApp;
  let redis: Redis;
  const prefix = testPrefix(__filename);

  beforeAll(async () => {
    a = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
    b = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    redis.disconnect();
  });

  it('strictly increase across holders in different applications', async () => {
    const tokens: number[] = [];
    for (let i = 0; i < 40; i++) {
      const lease = await (i % 2 ? a : b).locks.acquire('shared');
      tokens.push(lease.fencingToken);
      await lease.release();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  });

  it('keep increasing when the counters are lost (e.g. failover, FLUSHALL)', async () => {
    const before = await a.locks.acquire('counter-loss');
    await before.release();
    const counters = (await keysUnder(redis, prefix)).filter((key) => key.includes('#fence:'));
    await redis.del(...counters);
    const after = await a.locks.acquire('counter-loss');
    await after.release();
    expect(after.fencingToken).toBeGreaterThan(before.fencingToken);
  });

  it('leave one counter per hash slot behind, not one per key, however many keys were locked', async () => {
    const memPrefix = `${prefix}mem:`;
    // A generous command timeout: this test sends thousands of commands, and CI boxes are small.
    const app = await createLockApp({ redis: redisUrl(), keyPrefix: memPrefix, commandTimeoutMs: 15_000 });
    try {
      const keys = Array.from({ length: 2000 }, (_, i) => `user:${i}`);
      for (let i = 0; i < keys.length; i += 100) {
        await Promise.all(keys.slice(i, i + 100).map((key) => app.locks.withLock(key, async () => undefined)));
      }
      const left = await keysUnder(redis, memPrefix);
      const slots = new Set(keys.map((key) => calculateSlot(memPrefix + key)));
      expect(left.every((key) => key.startsWith(`${memPrefix}#fence:{`))).toBe(true);
      expect(left).toHaveLength(slots.size);
      // CRC16 spreads sequential keys so evenly that 2000 of them can occupy 2000 slots: the bound is the
      // slot count, reached at 16 384 keys, and shown below with keys sharing a hash tag.
      expect(left.length).toBeLessThanOrEqual(16_384);

      // Keys sharing a hash tag share a slot, so a million order lines of one order leave one counter.
      const tagged = Array.from({ length: 500 }, (_, i) => `order:{42}:line:${i}`);
      await Promise.all(tagged.map((key) => app.locks.withLock(key, async () => undefined)));
      expect((await keysUnder(redis, memPrefix)).length).toBeLessThanOrEqual(slots.size + 1);
    } finally {
      await app.close();
    }
  });
});
