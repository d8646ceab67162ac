import { LockReentryError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

describe('semaphores (permits) through LockService', () => {
  const prefix = testPrefix(__filename);
  let app: LockApp;
  let other: LockApp;
  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 10_000 });
    other = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 10_000 });
  });
  afterAll(async () => {
    await app.close();
    await other.close();
  });

  it('lets N holders of two instances in at once, each with its own lease and fencing token, and the next one in when one leaves', async () => {
    const a = await app.locks.acquire('partner', { permits: 2 });
    const b = await other.locks.acquire('partner', { permits: 2 });
    expect(b.fencingToken).toBeGreaterThan(a.fencingToken);
    expect(await app.locks.tryAcquire('partner', { permits: 2 })).toBeNull();
    const contention = app.next('contention', (e) => e.key === 'partner');
    const waiting = app.locks.acquire('partner', { permits: 2, waitMs: 30_000 });
    await contention;
    await b.release();
    const c = await waiting;
    expect(c.fencingToken).toBeGreaterThan(b.fencingToken);
    expect(a.held).toBe(true);
    expect(await other.locks.tryAcquire('partner', { permits: 2 })).toBeNull();
    await a.release();
    await c.release();
  });

  it('runs withLock bodies under a permit and joins a permit the chain holds only with reentrant', async () => {
    const ran = await app.locks.withLock('quota', { permits: 3 }, async (outer) => {
      await expect(app.locks.withLock('quota', { permits: 3 }, () => 'ran')).rejects.toBeInstanceOf(LockReentryError);
      await expect(app.locks.withLock('quota', { mode: 'read', reentrant: true }, () => 'ran')).rejects.toBeInstanceOf(LockReentryError);
      const inner = await app.locks.withLock('quota', { permits: 3, reentrant: true }, (lease) => lease);
      expect(inner).toBe(outer);
      expect((await app.store.list('quota')).length).toBe(1);
      return 'done';
    });
    expect(ran).toBe('done');
    expect(await app.store.inspect('quota')).toBeNull();
  });

  it('reports shape and permits on the events of a semaphore’s leases, and nothing new on a plain lease’s', async () => {
    const permit = await app.locks.acquire('evented', { permits: 4 });
    await permit.release();
    const plain = await app.locks.acquire('evented-plain');
    await plain.release();
    const of = (key: string) => [app.recorded('acquired'), app.recorded('released')].map((events) => events.find((e) => e.key === key)!);
    for (const e of of('evented')) expect(e).toMatchObject({ shape: 'permits', permits: 4 });
    for (const e of of('evented-plain')) {
      expect(e).not.toHaveProperty('shape');
      expect(e).not.toHaveProperty('permits');
    }
  });

  it('lists each permit holder with its shape for the runbook', async () => {
    const held = [await app.locks.acquire('pool', { permits: 5 }), await other.locks.acquire('pool', { permits: 5 })];
    const listed = await app.store.list('pool');
    expect(listed.map((lock) => [lock.shape, lock.fencingToken])).toEqual(held.map((lease) => ['permits', lease.fencingToken]));
    await Promise.all(held.map((lease) => lease.release()));
  });
});
