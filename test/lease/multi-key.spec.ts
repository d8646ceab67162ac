import { Redis } from 'ioredis';
import { LeaseLostError, LockKeyError, LockNotAcquiredError, LockReentryError, type LeaseSet } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

describe('several keys at once (all or nothing)', () => {
  const prefix = testPrefix(__filename);
  let app: LockApp;
  let other: LockApp;
  let redis: Redis;
  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 1_000 });
    other = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 10_000 });
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    await app.close();
    await other.close();
    redis.disconnect();
  });

  it('takes every key in one global order whatever order the call names them, duplicates collapsed, each with its own lease and fencing token', async () => {
    const set = await app.locks.acquire(['acct:b', 'acct:a', 'acct:b']);
    try {
      expect(set.keys).toEqual(['acct:a', 'acct:b']);
      expect([...set.leases.keys()]).toEqual(['acct:a', 'acct:b']);
      const acquired = app.recorded('acquired').filter((e) => e.key.startsWith('acct:'));
      expect(acquired.map((e) => e.key)).toEqual(['acct:a', 'acct:b']);
      for (const key of set.keys) {
        const stored = await app.store.inspect(key);
        expect(stored?.fencingToken).toBe(set.fencingTokens.get(key));
        expect(set.leases.get(key)!.fencingToken).toBe(set.fencingTokens.get(key));
      }
      expect(set.held).toBe(true);
    } finally {
      await set.release();
    }
    expect(set.held).toBe(false);
    expect(await app.store.inspect('acct:a')).toBeNull();
    expect(await app.store.inspect('acct:b')).toBeNull();
  });

  it('gives back the keys it got when one stays taken past waitMs, token-checked, and names the key that stayed taken', async () => {
    const blocker = await other.locks.acquire('aon:m');
    try {
      const error = await app.locks.acquire(['aon:z', 'aon:m', 'aon:a'], { waitMs: 50 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect((error as LockNotAcquiredError).key).toBe('aon:m');
      // 'aon:a' comes first in the global order: it was granted, then given back with its own token.
      const granted = app.recorded('acquired').find((e) => e.key === 'aon:a');
      const released = app.recorded('released').find((e) => e.key === 'aon:a');
      expect(granted).toBeDefined();
      expect(released?.tokenDigest).toBe(granted!.tokenDigest);
      expect(await app.store.inspect('aon:a')).toBeNull();
      // 'aon:z' comes after the key that stayed taken: never asked for.
      expect(app.recorded('acquired').find((e) => e.key === 'aon:z')).toBeUndefined();
      expect(await app.store.inspect('aon:z')).toBeNull();
      // The key it could not get is still the other holder's.
      expect((await app.store.inspect('aon:m'))?.fencingToken).toBe(blocker.fencingToken);
    } finally {
      await blocker.release();
    }
  });

  it('gives back the keys it got at once even with minHoldMs: the work never ran', async () => {
    const blocker = await other.locks.acquire('hold:b');
    try {
      await expect(app.locks.acquire(['hold:a', 'hold:b'], { waitMs: 0, minHoldMs: 60_000 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      expect(await app.store.inspect('hold:a')).toBeNull();
    } finally {
      await blocker.release();
    }
  });

  it('gives back the keys it got when the caller aborts while it waits for the next one', async () => {
    const blocker = await other.locks.acquire('abort:b');
    try {
      const controller = new AbortController();
      const waiting = app.next('contention', (e) => e.key === 'abort:b');
      const call = app.locks.acquire(['abort:b', 'abort:a'], { waitMs: 60_000, signal: controller.signal }).catch((e: unknown) => e);
      await waiting;
      const reason = new Error('request cancelled');
      controller.abort(reason);
      expect(await call).toBe(reason);
      expect(await app.store.inspect('abort:a')).toBeNull();
    } finally {
      await blocker.release();
    }
  });

  it('keeps every key until minHoldMs after its grant once withLocks ends, as for one key', async () => {
    await app.locks.withLocks(['mh:b', 'mh:a'], { minHoldMs: 60_000 }, async () => 'ran');
    expect(await other.locks.tryAcquire(['mh:a'])).toBeNull();
    expect(await other.locks.tryAcquire('mh:b')).toBeNull();
  });

  it('tryAcquire of a list resolves null and gives back what it got when one key is taken', async () => {
    const blocker = await other.locks.acquire('try:b');
    try {
      expect(await app.locks.tryAcquire(['try:b', 'try:a'])).toBeNull();
      expect(await app.store.inspect('try:a')).toBeNull();
    } finally {
      await blocker.release();
    }
    const set = await app.locks.tryAcquire(['try:b', 'try:a']);
    expect(set?.keys).toEqual(['try:a', 'try:b']);
    await set!.release();
  });

  it('rejects an empty list and a bad key before taking anything', async () => {
    await expect(app.locks.acquire([])).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.acquire(['bad:a', ''])).rejects.toBeInstanceOf(LockKeyError);
    await expect(app.locks.acquire(undefined as never)).rejects.toThrow(/must be a string/);
    expect(await app.store.inspect('bad:a')).toBeNull();
  });

  it('withLocks runs the body holding every key and releases them all afterwards', async () => {
    const result = await app.locks.withLocks(['wl:2', 'wl:1'], async (set) => {
      expect(set.keys).toEqual(['wl:1', 'wl:2']);
      expect((await app.store.inspect('wl:1'))?.fencingToken).toBe(set.fencingTokens.get('wl:1'));
      expect((await app.store.inspect('wl:2'))?.fencingToken).toBe(set.fencingTokens.get('wl:2'));
      return 'done';
    });
    expect(result).toBe('done');
    expect(await app.store.inspect('wl:1')).toBeNull();
    expect(await app.store.inspect('wl:2')).toBeNull();
  });

  it('releases every key at the end of an `await using` block', async () => {
    const block = async (): Promise<void> => {
      await using set = await app.locks.acquire(['use:1', 'use:2']);
      expect(set.held).toBe(true);
      expect(await app.store.inspect('use:2')).not.toBeNull();
    };
    await block();
    expect(await app.store.inspect('use:1')).toBeNull();
    expect(await app.store.inspect('use:2')).toBeNull();
  });

  it('aborts the set’s one signal when any lease is lost, and release() reports that loss', async () => {
    const set = await app.locks.acquire(['lost:a', 'lost:b']);
    await redis.del(`${prefix}lost:b`);
    const reason = await aborted(set.signal);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as LeaseLostError).key).toBe('lost:b');
    expect(set.held).toBe(false);
    await expect(set.release()).rejects.toBeInstanceOf(LeaseLostError);
    // The lease that was not lost is still given back.
    expect(await app.store.inspect('lost:a')).toBeNull();
  });

  it('ends withLocks in LeaseLostError when one of its leases was lost, with the body’s error as cause', async () => {
    const bodyError = new Error('transfer failed');
    const error = await app.locks
      .withLocks(['wlost:a', 'wlost:b'], async (set: LeaseSet) => {
        await redis.del(`${prefix}wlost:a`);
        await aborted(set.signal);
        throw bodyError;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLostError);
    expect((error as LeaseLostError).key).toBe('wlost:a');
    expect((error as LeaseLostError).cause).toBe(bodyError);
    expect(await app.store.inspect('wlost:b')).toBeNull();
  });

  it('shows the innermost running multi-key scope’s set through currentLeaseSet(), and none once it ended', async () => {
    let detached!: Promise<unknown>;
    let release!: () => void;
    const later = new Promise<void>((resolve) => (release = resolve));
    await app.locks.withLocks(['cur:a', 'cur:b'], async (outer) => {
      expect(app.locks.currentLeaseSet()).toBe(outer);
      await app.locks.withLocks(['cur:c'], async (inner) => {
        expect(app.locks.currentLeaseSet()).toBe(inner);
        // Work the inner scope leaves running sees the outer set once the inner scope has ended.
        detached = later.then(() => app.locks.currentLeaseSet());
      });
      release();
      expect(await detached).toBe(outer);
    });
    expect(app.locks.currentLeaseSet()).toBeUndefined();
  });

  it('fails fast with LockReentryError when the call chain holds one of the keys, and joins it when reentrant', async () => {
    await app.locks.withLock('re:a', async (outer) => {
      await expect(app.locks.withLocks(['re:b', 're:a'], async () => 'never')).rejects.toBeInstanceOf(LockReentryError);
      await expect(app.locks.acquire(['re:b', 're:a'])).rejects.toBeInstanceOf(LockReentryError);
      expect(await app.store.inspect('re:b')).toBeNull();
      const joined = await app.locks.withLocks(['re:b', 're:a'], { reentrant: true }, async (set) => {
        expect(set.leases.get('re:a')).toBe(outer);
        return set.fencingTokens.get('re:a');
      });
      expect(joined).toBe(outer.fencingToken);
      // The joined key stays the outer scope's; the one the inner call took was given back.
      expect(outer.held).toBe(true);
      expect(await app.store.inspect('re:b')).toBeNull();
    });
  });
});

describe('several keys at once on the memory store', () => {
  it('holds all the keys or none, in the global order, as on Redis', async () => {
    const app = await createLockApp({ store: 'memory', keyPrefix: 'mem:' });
    try {
      const blocker = await app.locks.acquire('m:b');
      expect(await app.locks.tryAcquire(['m:c', 'm:b', 'm:a'])).toBeNull();
      expect(await app.store.inspect('m:a')).toBeNull();
      await blocker.release();
      await app.locks.withLocks(['m:c', 'm:b', 'm:a'], async (set) => {
        expect(set.keys).toEqual(['m:a', 'm:b', 'm:c']);
        expect(await app.store.inspect('m:c')).not.toBeNull();
      });
      expect(await app.store.inspect('m:c')).toBeNull();
    } finally {
      await app.close();
    }
  });
});
