import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Lease } from '../../lib/index';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { exitOf, forkWorker } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { spinUntil } from '../support/until';

const WAITERS = 4;

describe('fair: true — one queue in Redis for every instance (plain locks, and semaphores beside them)', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  let apps: LockApp[];

  beforeAll(async () => {
    apps = await Promise.all(
      Array.from({ length: WAITERS + 1 }, (_, i) => createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true, holder: `app-${i}` })),
    );
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    redis.disconnect();
  });

  /** Every grant announced to any instance from now on, as `<instance> <message>`. */
  const announcedGrants = async (): Promise<{ announced: string[]; close(): void }> => {
    const grants = new Redis(redisUrl());
    const announced: string[] = [];
    grants.on('pmessage', (_pattern: string, channel: string, message: string) => announced.push(`${channel.slice(-12)} ${message}`));
    await grants.psubscribe(`${prefix}#granted:*`);
    return { announced, close: () => grants.disconnect() };
  };

  it('grants waiters of several applications in the order they queued, each release waking only the next one', async () => {
    const queueKey = layout.queueKey(layout.lockKey('fifo'));
    const { announced, close } = await announcedGrants();
    try {
      let holder = await apps[0]!.locks.acquire('fifo');
      const order: number[] = [];
      const waiting: Array<Promise<Lease>> = [];
      for (let i = 1; i <= WAITERS; i++) {
        waiting.push(apps[i]!.locks.acquire('fifo', { waitMs: 60_000 }).then((lease) => (order.push(i), lease)));
        // Queue order is arrival order in Redis: let each waiter's entry land before the next one starts.
        await spinUntil(async () => (await redis.llen(queueKey)) === i);
      }
      for (let next = 1; next <= WAITERS; next++) {
        const before = announced.length;
        await holder.release();
        const lease = await waiting[next - 1]!;
        expect(order).toEqual(Array.from({ length: next }, (_, i) => i + 1));
        expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
        // One grant announced per release, to the next waiter's instance only.
        await spinUntil(async () => announced.length > before);
        expect(announced.slice(before)).toEqual([expect.stringMatching(new RegExp(`^.* g\\|\\w+\\|${lease.fencingToken}\\|[0-9a-f]{40}$`))]);
        holder = lease;
      }
      await holder.release();
      expect(await redis.exists(queueKey, layout.lockKey('fifo'))).toBe(0);
    } finally {
      close();
    }
  });

  it('grants semaphore waiters of several applications in the order they queued, each released permit waking only the next one', async () => {
    const PERMITS = 2;
    const queueKey = layout.queueKey(layout.lockKey('quota'), 'shaped');
    const { announced, close } = await announcedGrants();
    try {
      const holders = [await apps[0]!.locks.acquire('quota', { permits: PERMITS }), await apps[0]!.locks.acquire('quota', { permits: PERMITS })];
      const order: number[] = [];
      const waiting: Array<Promise<Lease>> = [];
      for (let i = 1; i <= WAITERS; i++) {
        waiting.push(apps[i]!.locks.acquire('quota', { permits: PERMITS, waitMs: 60_000 }).then((lease) => (order.push(i), lease)));
        await spinUntil(async () => (await redis.llen(queueKey)) === i);
      }
      // A single attempt does not overtake the line.
      expect(await apps[0]!.locks.tryAcquire('quota', { permits: PERMITS })).toBeNull();
      let highest = Math.max(...holders.map((lease) => lease.fencingToken));
      for (let next = 1; next <= WAITERS; next++) {
        const before = announced.length;
        await holders.shift()!.release();
        const lease = await waiting[next - 1]!;
        expect(order).toEqual(Array.from({ length: next }, (_, i) => i + 1));
        expect(lease.fencingToken).toBeGreaterThan(highest);
        highest = lease.fencingToken;
        await spinUntil(() => announced.length > before);
        expect(announced.slice(before)).toEqual([expect.stringMatching(new RegExp(`^.* g\\|\\w+\\|${lease.fencingToken}\\|[0-9a-f]{40}$`))]);
        // The other permit is still held: never more than N holders.
        expect(await apps[0]!.store.list('quota')).toHaveLength(PERMITS);
        holders.push(lease);
      }
      await Promise.all(holders.map((lease) => lease.release()));
      expect(await redis.exists(queueKey, layout.lockKey('quota'))).toBe(0);
    } finally {
      close();
    }
  });

  it('grants readers and writers in the order they queued: the readers at the head together, a writer alone, a reader behind it after it', async () => {
    const queueKey = layout.queueKey(layout.lockKey('report'), 'shaped');
    const writer = await apps[0]!.locks.acquire('report', { mode: 'write' });
    const shapes = ['read', 'read', 'write', 'read'] as const;
    const granted: number[] = [];
    const waiting: Array<Promise<Lease>> = [];
    for (const [i, mode] of shapes.entries()) {
      waiting.push(apps[i + 1]!.locks.acquire('report', { mode, waitMs: 60_000 }).then((held) => (granted.push(i + 1), held)));
      // Queue order is arrival order in Redis: let each waiter's entry land before the next one starts.
      await spinUntil(async () => (await redis.llen(queueKey)) === i + 1);
    }
    // A single attempt to read does not overtake the line either.
    expect(await apps[0]!.locks.tryAcquire('report', { mode: 'read' })).toBeNull();

    await writer.release();
    // Both readers in one step (told in whichever order their instances hear it), fenced in line order.
    const [first, second] = await Promise.all([waiting[0]!, waiting[1]!]);
    expect(await redis.llen(queueKey)).toBe(2);
    expect(first.fencingToken).toBeGreaterThan(writer.fencingToken);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    await first.release();
    expect([...granted].sort()).toEqual([1, 2]);
    await second.release();
    const nextWriter = await waiting[2]!;
    expect(nextWriter.fencingToken).toBeGreaterThan(second.fencingToken);
    expect(granted.slice(2)).toEqual([3]);
    await nextWriter.release();
    const last = await waiting[3]!;
    expect(last.fencingToken).toBeGreaterThan(nextWriter.fencingToken);
    await last.release();
    expect(await redis.exists(queueKey, layout.lockKey('report'))).toBe(0);
  });

  it('loses no increment and issues increasing fencing tokens when 3 processes queue for one key', async () => {
    const counterKey = `${prefix}value`;
    const [processes, loops, iterations] = [3, 2, 20];
    const workers = Array.from({ length: processes }, () =>
      forkWorker(join(__dirname, 'workers/increment.worker.ts'), [prefix, counterKey, String(loops), String(iterations)], {
        LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ fair: true }),
      }),
    );
    expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
    const total = processes * loops * iterations;
    expect(Number(await redis.get(counterKey))).toBe(total);
    // The recorded history: value n was written under a lease, and each later value under a later grant.
    const history = (await redis.lrange(`${counterKey}:history`, 0, -1)).map((entry) => entry.split(':').map(Number) as [number, number]);
    expect(history.map(([value]) => value)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const fences = history.map(([, fence]) => fence);
    expect(fences.every((fence, i) => i === 0 || fence > fences[i - 1]!)).toBe(true);
  });
});
