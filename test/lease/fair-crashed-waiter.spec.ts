import { hostname } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { QUEUE_ENTRY_PATTERN, QUEUE_HEARTBEAT_MS } from '../../lib/stores/redis/scripts/queue.lua';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

const HOLD_WORKER = join(__dirname, 'workers/hold.worker.ts');
const FAIR = { LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ fair: true }) };
const ONE_PERMIT = JSON.stringify({ permits: 1 });

/** A queue entry's fields (see lib/stores/redis/scripts/queue.lua.ts). */
function parseEntry(entry: string): { expiresAt: number; holder: string } {
  const match = new RegExp(QUEUE_ENTRY_PATTERN.replace(/%d/g, '\\d').replace(/\|/g, '\\|')).exec(entry)!;
  return { expiresAt: Number(match[1]) / 1000 + Number(match[2]), holder: match[6]! };
}

describe('fair: true — a waiter that crashes or stalls does not hold the queue up', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  let app: LockApp;

  const queueOf = async (key: string) => (await redis.lrange(layout.queueKey(layout.lockKey(key)), 0, -1)).map(parseEntry);
  /** The queue of the key's semaphore waiters: its entries carry the shape before the holder (see shared-queue.lua.ts). */
  const permitQueueOf = async (key: string) =>
    (await redis.lrange(layout.queueKey(layout.lockKey(key), 'shaped'), 0, -1)).map(parseEntry).map((entry) => ({ ...entry, holder: entry.holder.replace(/^p\d+\|/, '') }));
  const until = async (condition: () => Promise<boolean>): Promise<void> => {
    while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: 'test' });
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  it('skips a waiter killed while queued (SIGKILL) once its heartbeat lease is over, and grants the one behind it', async () => {
    const held = await app.locks.acquire('job');
    const crashed = forkWorker(HOLD_WORKER, [prefix, 'job', '30000', '60000'], FAIR);
    await until(async () => (await queueOf('job')).length === 1);
    const behind = forkWorker(HOLD_WORKER, [prefix, 'job', '30000', '60000'], FAIR);
    try {
      await until(async () => (await queueOf('job')).length === 2);
      expect((await queueOf('job')).map((entry) => entry.holder)).toEqual([`${hostname()}:${crashed.pid}`, `${hostname()}:${behind.pid}`]);

      crashed.kill('SIGKILL');
      await exitOf(crashed);
      const granted = nextMessage<{ held: boolean; fencingToken: number }>(behind, (message) => message.held);
      await held.release();

      // The key may go to the dead waiter first (its heartbeat had not run out yet), for no longer than its
      // heartbeat lease; the waiter behind (60 s to wait) is granted after it, and the queue is empty.
      expect((await granted).fencingToken).toBeGreaterThan(held.fencingToken);
      expect(await queueOf('job')).toEqual([]);
      expect(app.recorded('lost')).toEqual([]);
    } finally {
      behind.kill('SIGKILL');
      await exitOf(behind);
    }
  });

  it('skips a semaphore waiter killed while queued (SIGKILL) once its heartbeat lease is over, and grants the permit to the one behind it', async () => {
    const held = await app.locks.acquire('pool', { permits: 1 });
    const crashed = forkWorker(HOLD_WORKER, [prefix, 'pool', '30000', '60000', ONE_PERMIT], FAIR);
    await until(async () => (await permitQueueOf('pool')).length === 1);
    const behind = forkWorker(HOLD_WORKER, [prefix, 'pool', '30000', '60000', ONE_PERMIT], FAIR);
    try {
      await until(async () => (await permitQueueOf('pool')).length === 2);
      expect((await permitQueueOf('pool')).map((entry) => entry.holder)).toEqual([`${hostname()}:${crashed.pid}`, `${hostname()}:${behind.pid}`]);
      crashed.kill('SIGKILL');
      await exitOf(crashed);
      const granted = nextMessage<{ held: boolean; fencingToken: number }>(behind, (message) => message.held);
      await held.release();
      // The permit may go to the dead waiter first, for no longer than its heartbeat lease; then to the one
      // behind, and to nobody else: one permit, one holder.
      const { fencingToken } = await granted;
      expect(fencingToken).toBeGreaterThan(held.fencingToken);
      expect(await permitQueueOf('pool')).toEqual([]);
      expect((await app.store.list('pool')).map((lock) => lock.fencingToken)).toEqual([fencingToken]);
    } finally {
      behind.kill('SIGKILL');
      await exitOf(behind);
    }
  });

  it('gives a SIGKILLed holder’s permit back after its lease to the first waiter in line, not to the one behind it', async () => {
    const other = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: 'other' });
    const holder = forkWorker(HOLD_WORKER, [prefix, 'partner', '1000', '0', ONE_PERMIT], FAIR);
    try {
      const killed = await nextMessage<{ held: boolean; fencingToken: number }>(holder);
      holder.kill('SIGKILL');
      await exitOf(holder);
      // Both wait far longer than the dead holder's lease: the permit comes back when it runs out (the first in
      // line looks again then), and only the first in line gets it.
      const first = app.locks.acquire('partner', { permits: 1, waitMs: 20_000 });
      await until(async () => (await permitQueueOf('partner')).length === 1);
      const second = other.locks.acquire('partner', { permits: 1, waitMs: 20_000 });
      await until(async () => (await permitQueueOf('partner')).length === 2);
      const lease = await first;
      expect(lease.fencingToken).toBeGreaterThan(killed.fencingToken);
      expect((await permitQueueOf('partner')).map((entry) => entry.holder)).toEqual(['other']);
      await lease.release();
      const next = await second;
      expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
      await next.release();
    } finally {
      holder.kill('SIGKILL');
      await exitOf(holder);
      await other.close();
    }
  });

  it('lets the queue of a waiter killed while it stood alone in line expire within two heartbeat leases of its own', async () => {
    const held = await app.locks.acquire('nightly');
    const crashed = forkWorker(HOLD_WORKER, [prefix, 'nightly', '30000', '60000'], FAIR);
    const queueKey = layout.queueKey(layout.lockKey('nightly'));
    try {
      await until(async () => (await queueOf('nightly')).length === 1);
      crashed.kill('SIGKILL');
      await exitOf(crashed);
      // Nobody else waits for the key: no hand-off pops the dead entry, only the queue's own TTL removes it.
      // It must not outlive the dead waiter's heartbeat by more than two more (it stood for 28 s more).
      const [entry] = await queueOf('nightly');
      const now = Date.now();
      const ttl = await redis.pttl(queueKey);
      expect(ttl).toBeGreaterThan(0);
      expect(now + ttl).toBeLessThanOrEqual(entry!.expiresAt + 2 * QUEUE_HEARTBEAT_MS);
    } finally {
      await held.release();
      await redis.del(queueKey);
    }
  });

  it('drops a dead entry standing before a live waiter at that waiter\'s next look, though the key stays held', async () => {
    const held = await app.locks.acquire('ledger');
    const crashed = forkWorker(HOLD_WORKER, [prefix, 'ledger', '30000', '60000'], FAIR);
    await until(async () => (await queueOf('ledger')).length === 1);
    const behind = forkWorker(HOLD_WORKER, [prefix, 'ledger', '30000', '60000'], FAIR);
    try {
      await until(async () => (await queueOf('ledger')).length === 2);
      crashed.kill('SIGKILL');
      await exitOf(crashed);
      const [dead] = await queueOf('ledger');
      await until(async () => Date.now() > dead!.expiresAt);
      // The live waiter's next look after the dead one's heartbeat ran out (its own entry gets a later
      // deadline): nobody is handed anything (the key is held), yet the dead entry must go, or it stands
      // until the queue expires, renewed by the live waiter behind it for as long as that one waits.
      const mine = (await queueOf('ledger')).find((entry) => entry.holder === `${hostname()}:${behind.pid}`)!;
      await until(async () => (await queueOf('ledger')).some((entry) => entry.holder === mine.holder && entry.expiresAt > mine.expiresAt + 1));
      expect((await queueOf('ledger')).map((entry) => entry.holder)).toEqual([mine.holder]);
    } finally {
      await held.release();
      behind.kill('SIGKILL');
      await exitOf(behind);
    }
  });

  it('drops a waiter that stalled past its heartbeat (SIGSTOP), grants the one behind, and lets the stalled one queue again at the back', async () => {
    const held = await app.locks.acquire('report');
    const stalled = forkWorker(HOLD_WORKER, [prefix, 'report', '30000', '60000'], FAIR);
    await until(async () => (await queueOf('report')).length === 1);
    const behind = forkWorker(HOLD_WORKER, [prefix, 'report', '30000', '60000'], FAIR);
    try {
      await until(async () => (await queueOf('report')).length === 2);
      stalled.kill('SIGSTOP');
      // Its heartbeat deadline, on its own clock (the one in its entry), passes while it cannot renew it.
      const [stalledEntry] = await queueOf('report');
      await until(async () => Date.now() > stalledEntry!.expiresAt);

      const behindGranted = nextMessage<{ held: boolean; fencingToken: number }>(behind, (message) => message.held);
      await held.release();
      const first = await behindGranted;
      expect(first.fencingToken).toBeGreaterThan(held.fencingToken);

      // Woken up, the stalled waiter finds its place gone and joins again, behind nobody but the holder.
      const stalledGranted = nextMessage<{ held: boolean; fencingToken: number }>(stalled, (message) => message.held);
      stalled.kill('SIGCONT');
      await until(async () => (await queueOf('report')).some((entry) => entry.holder === `${hostname()}:${stalled.pid}`));
      behind.kill('SIGKILL');
      await exitOf(behind);
      // The killed holder's lease (30 s) is what the stalled waiter waits for now: the runbook's force-release
      // stands in for it, and the queue's first waiter is told to look again.
      await app.store.forceRelease('report');
      expect((await stalledGranted).fencingToken).toBeGreaterThan(first.fencingToken);
    } finally {
      for (const child of [stalled, behind]) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exitOf(child);
      }
    }
  });
});
