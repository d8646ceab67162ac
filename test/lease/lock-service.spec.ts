import { Redis } from 'ioredis';
import { LeaseLostError, LockKeyError, LockReentryError, LockStoreUnavailableError } from '../../lib/index';
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

  it('on shutdown lets a running locked call finish, then releases its key', async () => {
    const other = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
    let finish!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const running = other.locks.withLock('draining', async () => {
      entered();
      await new Promise<void>((resolve) => (finish = resolve));
      return 'finished';
    });
    await inside;
    // What app.close() ends with, called directly so the test knows the drain has begun.
    const closing = other.locks.onApplicationShutdown();
    await expect(other.locks.acquire('another')).rejects.toBeInstanceOf(LockStoreUnavailableError);
    expect((await app.store.inspect('draining'))?.holder).toBeDefined();
    finish();
    await expect(running).resolves.toBe('finished');
    await closing;
    expect(await app.store.inspect('draining')).toBeNull();
    expect(other.recorded('lost')).toEqual([]);
    await other.close();
  });

  it('on shutdown gives up leases still held after the grace period: signal aborted, key released', async () => {
    const other = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, shutdownGraceMs: 50 });
    const lease = await other.locks.acquire('held-at-shutdown');
    await other.close();
    await expect(other.locks.acquire('after-shutdown')).rejects.toBeInstanceOf(LockStoreUnavailableError);
    expect(await app.store.inspect('held-at-shutdown')).toBeNull();
    expect(lease.held).toBe(false);
    expect((lease.signal.reason as LeaseLostError).reason).toBe('shutdown');
    expect(other.recorded('lost')).toMatchObject([{ key: 'held-at-shutdown', reason: 'shutdown' }]);
  });

  it('never lets a call that outlives its locked scope join the released lease', async () => {
    let late!: Promise<number | undefined>;
    await app.locks.withLock('audit', async () => {
      // Started in the scope, not awaited: it runs after the scope ended and must lock on its own.
      late = new Promise((resolve) => setTimeout(resolve, 20)).then(() =>
        app.locks.withLock('audit', { reentrant: true }, async () => app.locks.current()?.fencingToken),
      );
    });
    const outer = app.recorded('acquired').filter((e) => e.key === 'audit');
    const token = await late;
    const acquisitions = app.recorded('acquired').filter((e) => e.key === 'audit');
    expect(acquisitions).toHaveLength(outer.length + 1);
    expect(token).toBe(acquisitions.at(-1)!.fencingToken);
  });
});
