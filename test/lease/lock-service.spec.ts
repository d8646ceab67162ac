import { Redis } from 'ioredis';
import { LockKeyError, LockReentryError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

class PaymentDeclined extends Error {
  readonly status = 402;
}

describe('LockService', () => {
  const prefix = testPrefix(__filename);
  let app: LockApp;
  let redis: Redis;

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  it('passes a business error through withLock unchanged and still releases', async () => {
    const declined = new PaymentDeclined('card declined');
    const error = await app.locks.withLock('pay', async () => {
      throw declined;
    }).catch((e: unknown) => e);
    expect(error).toBe(declined);
    expect(await app.store.inspect('pay')).toBeNull();
  });

  it('returns the body’s result and exposes the lease as current() only inside the scope', async () => {
    expect(app.locks.current()).toBeUndefined();
    const result = await app.locks.withLock('scoped', async (lease) => {
      await Promise.resolve();
      expect(app.locks.current()).toBe(lease);
      return lease.fencingToken;
    });
    expect(result).toBeGreaterThan(0);
    expect(app.locks.current()).toBeUndefined();
  });

  it('releases with `await using` at the end of the block', async () => {
    {
      await using lease = await app.locks.acquire('using');
      expect((await app.store.inspect('using'))?.fencingToken).toBe(lease.fencingToken);
    }
    expect(await app.store.inspect('using')).toBeNull();
  });

  it('treats release() as idempotent', async () => {
    const lease = await app.locks.acquire('twice');
    await Promise.all([lease.release(), lease.release()]);
    await lease.release();
    expect(app.recorded('released').filter((e) => e.key === 'twice')).toHaveLength(1);
  });

  it('extends a lease to a new length and keeps renewing at that length', async () => {
    const lease = await app.locks.acquire('extended', { leaseMs: 1_000 });
    await lease.extend(20_000);
    expect((await app.store.inspect('extended'))!.ttlMs).toBeGreaterThan(1_000);
    await lease.release();
  });

  it('fails fast on re-entry without reentrant, instead of waiting out waitMs', async () => {
    const started = Date.now();
    await expect(
      app.locks.withLock('reenter', { waitMs: 60_000 }, () => app.locks.withLock('reenter', async () => undefined)),
    ).rejects.toBeInstanceOf(LockReentryError);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('joins the held lease on re-entry with reentrant, releasing only at the outermost exit', async () => {
    await app.locks.withLock('nested', async (outer) => {
      await app.locks.withLock('nested', { reentrant: true }, async (inner) => {
        expect(inner).toBe(outer);
      });
      expect((await app.store.inspect('nested'))?.fencingToken).toBe(outer.fencingToken);
    });
    expect(await app.store.inspect('nested')).toBeNull();
  });

  it('keeps Promise.all siblings mutually excluded, whether they take the key or join their caller’s lease', async () => {
    const counterKey = `${prefix}siblings`;
    const increment = async (): Promise<void> => {
      const value = Number((await redis.get(counterKey)) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 2));
      await redis.set(counterKey, String(value + 1));
    };
    await app.locks.withLock('parent', async () => {
      await Promise.all(Array.from({ length: 10 }, () => app.locks.withLock('child', { waitMs: 30_000 }, increment)));
      await Promise.all(Array.from({ length: 10 }, () => app.locks.withLock('parent', { reentrant: true }, increment)));
    });
    expect(Number(await redis.get(counterKey))).toBe(20);
  });

  it.each([
    ['an empty key', ''],
    ['a key over the length limit', 'k'.repeat(513)],
    ['a non-string key', 42],
    ['a null key', null],
    ['a key in the reserved namespace', '#fence:x'],
    ['a key with a newline', 'order:1\nforged log line'],
  ])('rejects %s with LockKeyError before any I/O', async (_, key) => {
    await expect(app.locks.acquire(key as string)).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.withLock(key as string, async () => undefined)).rejects.toBeInstanceOf(LockKeyError);
  });

  it('releases held leases and closes its connections on application shutdown', async () => {
    const other = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
    const lease = await other.locks.acquire('held-at-shutdown');
    await other.close();
    expect(await app.store.inspect('held-at-shutdown')).toBeNull();
    expect(lease.held).toBe(false);
    expect(other.recorded('lost')).toEqual([]);
  });
});
