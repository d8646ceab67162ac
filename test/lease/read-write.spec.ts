import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  DistributedLock,
  DistributedLockModule,
  LockConfigError,
  LockReentryError,
  LockUpgradeError,
  MemoryLockStore,
  type LockStore,
} from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

describe('read/write locks through LockService', () => {
  const prefix = testPrefix(__filename);
  // Two instances of one service on the run's Redis.
  let app: LockApp;
  let other: LockApp;
  beforeAll(async () => {
    const instance = (): Promise<LockApp> => createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 10_000 });
    [app, other] = await Promise.all([instance(), instance()]);
  });
  afterAll(() => Promise.all([app.close(), other.close()]));

  it('lets readers of two instances hold the key together, and the writer in once both let go, fenced above both', async () => {
    const a = await app.locks.acquire('doc:1', { mode: 'read' });
    const b = await other.locks.acquire('doc:1', { mode: 'read' });
    expect(b.fencingToken).toBeGreaterThan(a.fencingToken);
    expect(app.recorded('acquired').find((e) => e.key === 'doc:1')).toMatchObject({ shape: 'read', fencingToken: a.fencingToken });
    expect(await other.locks.tryAcquire('doc:1', { mode: 'write' })).toBeNull();
    const contention = other.next('contention', (e) => e.key === 'doc:1');
    const writing = other.locks.acquire('doc:1', { mode: 'write', waitMs: 30_000 });
    await contention;
    await a.release();
    await b.release();
    const writer = await writing;
    expect(writer.fencingToken).toBeGreaterThan(b.fencingToken);
    expect(await app.locks.tryAcquire('doc:1', { mode: 'read' })).toBeNull();
    await writer.release();
  });

  it('does not starve a waiting writer: once it waits, readers that come later wait behind it', async () => {
    const first = await app.locks.acquire('doc:2', { mode: 'read' });
    const contention = other.next('contention', (e) => e.key === 'doc:2');
    const writing = other.locks.acquire('doc:2', { mode: 'write', waitMs: 30_000 });
    // Turned away once: from here the store knows a writer waits.
    await contention;
    expect(await app.locks.tryAcquire('doc:2', { mode: 'read' })).toBeNull();
    const lateReader = app.locks.acquire('doc:2', { mode: 'read', waitMs: 30_000 });
    await first.release();
    const writer = await writing;
    expect(await app.locks.tryAcquire('doc:2', { mode: 'read' })).toBeNull();
    await writer.release();
    const reader = await lateReader;
    expect(reader.fencingToken).toBeGreaterThan(writer.fencingToken);
    await reader.release();
  });

  it('keeps no reader out after a writer’s single attempt (tryAcquire) was turned away', async () => {
    const reader = await app.locks.acquire('doc:8', { mode: 'read' });
    expect(await other.locks.tryAcquire('doc:8', { mode: 'write' })).toBeNull();
    const second = await app.locks.tryAcquire('doc:8', { mode: 'read' });
    expect(second).not.toBeNull();
    await Promise.all([reader.release(), second!.release()]);
  });

  it('refuses an upgrade (a write or a plain lock inside a read of the same key) with LockUpgradeError, at once, reentrant or not', async () => {
    const upgrades = await app.locks.withLock('doc:3', { mode: 'read' }, async () => [
      await app.locks.withLock('doc:3', { mode: 'write', waitMs: 60_000 }, () => 'ran').catch((e: unknown) => e),
      await app.locks.withLock('doc:3', { mode: 'write', reentrant: true, waitMs: 60_000 }, () => 'ran').catch((e: unknown) => e),
      await app.locks.withLock('doc:3', { waitMs: 60_000 }, () => 'ran').catch((e: unknown) => e),
      await app.locks.acquire('doc:3', { mode: 'write', waitMs: 60_000 }).catch((e: unknown) => e),
      await app.locks.withLocks(['doc:3', 'doc:3b'], { reentrant: true, waitMs: 60_000 }, () => 'ran').catch((e: unknown) => e),
      await app.locks.acquire(['doc:3', 'doc:3b'], { waitMs: 60_000 }).catch((e: unknown) => e),
    ]);
    for (const error of upgrades) {
      expect(error).toBeInstanceOf(LockUpgradeError);
      expect((error as LockUpgradeError).code).toBe('LOCK_UPGRADE_REFUSED');
      expect((error as LockUpgradeError).key).toBe('doc:3');
    }
    expect((upgrades[0] as LockUpgradeError).requested).toBe('write');
    expect((upgrades[2] as LockUpgradeError).requested).toBe('exclusive');
    expect(await app.store.inspect('doc:3')).toBeNull();
    expect(await app.store.inspect('doc:3b')).toBeNull();
  });

  it('lets a read inside a write of the same key join the write lease with reentrant, and refuses it without', async () => {
    await app.locks.withLock('doc:4', { mode: 'write' }, async (writer) => {
      const joined = await app.locks.withLock('doc:4', { mode: 'read', reentrant: true }, (lease) => lease);
      expect(joined).toBe(writer);
      await expect(app.locks.withLock('doc:4', { mode: 'read' }, () => 'ran')).rejects.toBeInstanceOf(LockReentryError);
      expect(await other.locks.tryAcquire('doc:4', { mode: 'read' })).toBeNull();
    });
  });

  it('renews each reader’s own lease in the watchdog batch and loses one reader alone when its hold is gone', async () => {
    const short = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 900 });
    const redis = new Redis(redisUrl());
    try {
      const a = await short.locks.acquire('doc:5', { mode: 'read' });
      const b = await short.locks.acquire('doc:5', { mode: 'read' });
      await short.next('renewed', (e) => e.key === 'doc:5' && e.fencingToken === a.fencingToken);
      await short.next('renewed', (e) => e.key === 'doc:5' && e.fencingToken === b.fencingToken);
      // Take a's hold away behind its back (as an expiry during a pause would): only a is lost.
      const fields = await redis.hgetall(`${prefix}doc:5`);
      const field = Object.keys(fields).find((name) => fields[name]!.includes(`|${a.fencingToken}|`))!;
      await redis.hdel(`${prefix}doc:5`, field);
      const lost = await short.next('lost', (e) => e.key === 'doc:5');
      expect(lost.fencingToken).toBe(a.fencingToken);
      expect(a.held).toBe(false);
      await short.next('renewed', (e) => e.key === 'doc:5' && e.fencingToken === b.fencingToken);
      expect(b.held).toBe(true);
      await b.release();
    } finally {
      await short.close();
      redis.disconnect();
    }
  });

  it('refuses a bad mode, permits with a mode, and a shape on a list of keys with LockConfigError naming the option', async () => {
    await expect(app.locks.acquire('doc:6', { mode: 'reed' as 'read' })).rejects.toThrow(/"mode" = "reed"/);
    await expect(app.locks.tryAcquire('doc:6', { mode: 'read', permits: 2 })).rejects.toBeInstanceOf(LockConfigError);
    await expect(app.locks.acquire(['doc:6', 'doc:7'], { mode: 'read' })).rejects.toThrow(/a single key/);
    await expect(app.locks.withLocks(['doc:6'], { permits: 2 }, () => 'ran')).rejects.toBeInstanceOf(LockConfigError);
  });
});

describe('read/write locks on @DistributedLock', () => {
  @Injectable()
  class Reports {
    @DistributedLock({ key: 'report:{id}', mode: 'read' })
    async read(id: string): Promise<number> {
      return Number(id);
    }
  }

  it('locks a decorated method for reading on the memory store', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ store: 'memory', keyPrefix: `rw-decorator:${process.pid}:` })],
      providers: [Reports],
    }).compile();
    const nest = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      expect(await nest.get(Reports).read('7')).toBe(7);
    } finally {
      await nest.close();
    }
  });

  it('stops the start with LockConfigError naming the shape and the store when the store has no read/write locks', async () => {
    const memory = new MemoryLockStore({ keyPrefix: `rw-refused:${process.pid}:` });
    // A store that keeps only the plain contract, as Redlock does.
    class PlainOnlyStore implements LockStore {
      acquire = memory.acquire.bind(memory);
      release = memory.release.bind(memory);
      renew = memory.renew.bind(memory);
      onRelease = memory.onRelease.bind(memory);
      inspect = memory.inspect.bind(memory);
      list = memory.list.bind(memory);
      forceRelease = memory.forceRelease.bind(memory);
      ping = memory.ping.bind(memory);
      close = memory.close.bind(memory);
    }
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ store: new PlainOnlyStore() })],
      providers: [Reports],
    }).compile();
    const nest = moduleRef.createNestApplication({ logger: false });
    const error = await nest.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(/mode of @DistributedLock on Reports\.read.*PlainOnlyStore does not offer mode: 'read'/);
    await nest.close().catch(() => undefined);
    // A LockService call asking for a shape on such a store is refused the same way, before any store call.
    const plain = await createLockApp({ store: new PlainOnlyStore() });
    try {
      await expect(plain.locks.acquire('k', { permits: 2 })).rejects.toThrow(/permits of the call.*PlainOnlyStore does not offer permits/);
      expect(await plain.store.inspect('k')).toBeNull();
    } finally {
      await plain.close();
    }
  });
});
