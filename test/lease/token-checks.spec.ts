import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { LeaseLostError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { storedLock } from '../support/stored-lock';

describe('ownership tokens', () => {
  const prefix = testPrefix(__filename);
  let a: LockApp;
  let b: LockApp;
  let redis: Redis;

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

  it('a lease whose key was taken over by another holder can neither release nor extend it', async () => {
    const stale = await a.locks.acquire('order:1', { leaseMs: 10_000 });
    // Another holder gets the key after ours vanished (as after an expiry the watchdog did not catch).
    await redis.del(`${prefix}order:1`);
    const current = await b.locks.acquire('order:1', { leaseMs: 10_000, waitMs: 0 });

    await expect(stale.extend(60_000)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(stale.release()).rejects.toBeInstanceOf(LeaseLostError);
    const held = await b.store.inspect('order:1');
    expect(held?.fencingToken).toBe(current.fencingToken);
    expect(held!.ttlMs).toBeLessThanOrEqual(10_000);
    expect(stale.signal.aborted).toBe(true);
    await current.release();
    expect(await b.store.inspect('order:1')).toBeNull();
  });

  it("a stale lease whose loss was not noticed yet cannot release the next holder's key", async () => {
    // No renewal before release (autoRenew off, lease long): the release itself is the first to reach Redis.
    const stale = await a.locks.acquire('order:2', { leaseMs: 60_000, autoRenew: false });
    await redis.del(`${prefix}order:2`);
    const current = await b.locks.acquire('order:2', { leaseMs: 10_000, waitMs: 0 });

    await expect(stale.release()).rejects.toBeInstanceOf(LeaseLostError);
    const held = await b.store.inspect('order:2');
    expect(held?.fencingToken).toBe(current.fencingToken);
    expect(held!.ttlMs).toBeGreaterThan(0);
    await current.release();
  });

  it('gives every acquisition its own token, even within one process', async () => {
    const first = await a.locks.acquire('order:2');
    await first.release();
    const second = await a.locks.acquire('order:2');
    await second.release();
    const [acquiredFirst, acquiredSecond] = a.recorded('acquired').filter((e) => e.key === 'order:2');
    expect(acquiredFirst!.tokenDigest).not.toBe(acquiredSecond!.tokenDigest);
  });

  it('never puts the token itself into events or the store holder field', async () => {
    const lease = await a.locks.acquire('order:3');
    const stored = await storedLock(redis, `${prefix}order:3`);
    await lease.release();
    const token = stored!.token;
    expect(token.length).toBeGreaterThanOrEqual(22);
    const everything = JSON.stringify([a.recorded('acquired'), a.recorded('released'), lease]) + inspect(lease);
    expect(everything).not.toContain(token);
    // Nor does a copy of the lease carry it: spread, Object.assign, Object.entries.
    const copies = [{ ...lease }, Object.assign({}, lease), Object.fromEntries(Object.entries(lease))];
    for (const copy of copies) expect(Object.values(copy)).not.toContain(token);
  });
});
