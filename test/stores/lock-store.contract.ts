import { randomBytes } from 'node:crypto';
import type { LockStore } from '../../lib/index';

export interface ContractSubject {
  readonly store: LockStore;
  readonly cleanup?: () => Promise<void>;
  /**
   * A lease short enough to watch run out and long enough for one grant of the store on a loaded box (the
   * minimum hold of the keepMs case is 10 ms more). A store whose grant takes several round trips (Redlock:
   * two phases on every master, within the lease's validity) needs more than the default.
   * @default 30
   */
  readonly shortLeaseMs?: number;
}

const token = (): string => randomBytes(16).toString('base64url');

/** Polls a condition the store exposes (not a guessed sleep): used only to observe a TTL running out. */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * The lease protocol every store must keep; the Redis store and the memory store both run it, so the
 * memory store can stand in for Redis in users' unit tests without changing what their code sees.
 */
export function describeLockStoreContract(name: string, create: () => Promise<ContractSubject>): void {
  describe(`${name} keeps the lock store contract`, () => {
    let subject: ContractSubject;
    let store: LockStore;
    let n = 0;
    const key = (): string => `contract:${++n}`;
    const short = (): number => subject.shortLeaseMs ?? 30;

    beforeAll(async () => {
      subject = await create();
      store = subject.store;
    });
    afterAll(async () => {
      await store.close();
      await subject.cleanup?.();
    });

    it('refuses an empty ownership token (anybody could guess it)', async () => {
      await expect(store.acquire(`empty-token-${Math.random()}`, '', 1_000, 'test')).rejects.toBeInstanceOf(TypeError);
    });

    it('grants a free key with a positive integer fencing token', async () => {
      const result = await store.acquire(key(), token(), 10_000, 'test');
      expect(result.acquired).toBe(true);
      if (!result.acquired) return;
      expect(Number.isSafeInteger(result.fencingToken)).toBe(true);
      expect(result.fencingToken).toBeGreaterThan(0);
    });

    it('denies a held key and reports the holder TTL', async () => {
      const k = key();
      await store.acquire(k, token(), 10_000, 'test');
      const denied = await store.acquire(k, token(), 10_000, 'test');
      expect(denied.acquired).toBe(false);
      if (denied.acquired) return;
      expect(denied.ttlMs).toBeGreaterThan(0);
      expect(denied.ttlMs).toBeLessThanOrEqual(10_000);
    });

    it('releases only for the owning token', async () => {
      const k = key();
      const owner = token();
      await store.acquire(k, owner, 10_000, 'test');
      expect(await store.release(k, token(), 0)).toBe(false);
      expect(await store.inspect(k)).not.toBeNull();
      expect(await store.release(k, owner, 0)).toBe(true);
      expect(await store.inspect(k)).toBeNull();
      expect(await store.release(k, owner, 0)).toBe(false);
    });

    it('lets an expired holder neither release nor renew the next holder’s lease', async () => {
      const k = key();
      const first = token();
      await store.acquire(k, first, short(), 'first');
      await eventually(async () => (await store.inspect(k)) === null);
      const second = token();
      const granted = await store.acquire(k, second, 10_000, 'second');
      expect(granted.acquired).toBe(true);
      expect(await store.release(k, first, 0)).toBe(false);
      expect(await store.renew([{ key: k, token: first, leaseMs: 60_000 }])).toEqual([false]);
      const held = await store.inspect(k);
      expect(held?.holder).toBe('second');
      expect(held!.ttlMs).toBeLessThanOrEqual(10_000);
    });

    it('renews owned keys in one batch, in request order, without re-creating missing ones', async () => {
      const [a, b, missing] = [key(), key(), key()];
      const [ta, tb] = [token(), token()];
      await store.acquire(a, ta, 1_000, 'test');
      await store.acquire(b, tb, 1_000, 'test');
      const results = await store.renew([
        { key: a, token: ta, leaseMs: 20_000 },
        { key: b, token: token(), leaseMs: 20_000 },
        { key: missing, token: token(), leaseMs: 20_000 },
        { key: b, token: tb, leaseMs: 20_000 },
      ]);
      expect(results).toEqual([true, false, false, true]);
      expect((await store.inspect(a))!.ttlMs).toBeGreaterThan(1_000);
      expect(await store.inspect(missing)).toBeNull();
    });

    it('issues strictly increasing fencing tokens to successive holders of a key', async () => {
      const k = key();
      let previous = 0;
      for (let i = 0; i < 50; i++) {
        const owner = token();
        const result = await store.acquire(k, owner, 10_000, 'test');
        if (!result.acquired) throw new Error('key should be free');
        expect(result.fencingToken).toBeGreaterThan(previous);
        previous = result.fencingToken;
        await store.release(k, owner, 0);
      }
    });

    it('keeps a released key for keepMs (minimum hold) and then frees it', async () => {
      const k = key();
      const owner = token();
      await store.acquire(k, owner, 10_000, 'test');
      // Long enough that the attempt right after the release lands within it on a loaded box.
      const keepMs = Math.max(1_000, short() + 10);
      expect(await store.release(k, owner, keepMs)).toBe(true);
      const denied = await store.acquire(k, token(), 10_000, 'test');
      expect(denied.acquired).toBe(false);
      if (!denied.acquired) expect(denied.ttlMs).toBeLessThanOrEqual(keepMs);
      await eventually(async () => (await store.inspect(k)) === null);
      expect((await store.acquire(k, token(), 10_000, 'test')).acquired).toBe(true);
    });

    it('frees the key of a holder that never releases once its lease runs out', async () => {
      const k = key();
      await store.acquire(k, token(), short(), 'crashed');
      await eventually(async () => (await store.acquire(k, token(), 10_000, 'next')).acquired);
    });

    it('notifies release listeners on release, not on a minimum-hold release', async () => {
      const [k, held] = [key(), key()];
      const [owner, heldOwner] = [token(), token()];
      await store.acquire(k, owner, 10_000, 'test');
      await store.acquire(held, heldOwner, 10_000, 'test');
      const heard: string[] = [];
      let heardRelease!: () => void;
      const released = new Promise<void>((resolve) => (heardRelease = resolve));
      const stopHeld = await store.onRelease(held, () => heard.push(held));
      const stop = await store.onRelease(k, () => {
        heard.push(k);
        heardRelease();
      });
      await store.release(held, heldOwner, 5_000);
      await store.release(k, owner, 0);
      await released;
      stop();
      stopHeld();
      expect(heard).toEqual([k]);
    });

    it('lists held locks matching a glob, sorted by key, and nothing it does not hold', async () => {
      const base = `list:${++n}`;
      const owners = [token(), token(), token()];
      await store.acquire(`${base}:b`, owners[0]!, 10_000, 'pod-b');
      await store.acquire(`${base}:a`, owners[1]!, 10_000, 'pod-a');
      await store.acquire(`${base}x:c`, owners[2]!, 10_000, 'pod-c');
      await store.acquire(`${base}:gone`, token(), 10_000, 'pod-d');
      const released = await store.list(`${base}:gone`);
      expect(released.map((lock) => lock.key)).toEqual([`${base}:gone`]);
      await store.forceRelease(`${base}:gone`);
      const held = await store.list(`${base}:*`);
      expect(held.map((lock) => [lock.key, lock.holder])).toEqual([
        [`${base}:a`, 'pod-a'],
        [`${base}:b`, 'pod-b'],
      ]);
      expect(held.every((lock) => lock.ttlMs > 0 && lock.fencingToken > 0)).toBe(true);
      expect((await store.list(`${base}?:*`)).map((lock) => lock.key)).toEqual([`${base}x:c`]);
      expect(await store.list(`${base}[x]:*`)).toEqual([]);
    });

    it('force-releases whoever holds a key, and wakes its waiters', async () => {
      const k = key();
      const granted = await store.acquire(k, token(), 10_000, 'stuck');
      if (!granted.acquired) throw new Error('key should be free');
      let woken!: () => void;
      const wake = new Promise<void>((resolve) => (woken = resolve));
      const stop = await store.onRelease(k, () => woken());
      const outcome = await store.forceRelease(k);
      expect(outcome).toMatchObject({ released: true, lock: { key: k, holder: 'stuck', fencingToken: granted.fencingToken } });
      await wake;
      stop();
      expect(await store.inspect(k)).toBeNull();
      expect(await store.forceRelease(k)).toEqual({ released: false, reason: 'not-held' });
    });

    it('force-releases only the grant the operator saw when given its fencing token', async () => {
      const k = key();
      const first = token();
      const old = await store.acquire(k, first, 10_000, 'old');
      if (!old.acquired) throw new Error('key should be free');
      await store.release(k, first, 0);
      const next = await store.acquire(k, token(), 10_000, 'new');
      if (!next.acquired) throw new Error('key should be free');
      const refused = await store.forceRelease(k, old.fencingToken);
      expect(refused).toMatchObject({ released: false, reason: 'fencing-mismatch', current: { holder: 'new', fencingToken: next.fencingToken } });
      expect(await store.inspect(k)).toMatchObject({ holder: 'new' });
      expect(await store.forceRelease(k, next.fencingToken)).toMatchObject({ released: true, lock: { holder: 'new' } });
    });

    it('answers a ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('reports what it holds: fencing token, holder and TTL', async () => {
      const k = key();
      const granted = await store.acquire(k, token(), 10_000, 'host-1:42');
      const held = await store.inspect(k);
      expect(held).toMatchObject({ key: k, holder: 'host-1:42' });
      if (granted.acquired) expect(held!.fencingToken).toBe(granted.fencingToken);
      expect(held!.ttlMs).toBeGreaterThan(0);
    });
  });
}
