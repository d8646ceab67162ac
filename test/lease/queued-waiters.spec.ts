import { Redis } from 'ioredis';
import { LockConfigError, type Lease, type LockModuleOptions } from '../../lib/index';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { parseLockValue } from '../../lib/stores/redis/scripts/lock-value';
import { expectHandedOnInArrivalOrder } from '../stores/fair-queue.scenarios';
import { createLockApp, type LockApp } from '../support/lock-app';
import { moduleStartError } from '../support/module-start';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { pollUntil } from '../support/until';

/**
 * Redis with the default options: a plain lock's waiters queue in Redis (`queue`, on by default), so a hot key
 * passes from application to application in arrival order and each release wakes only the next waiter; an
 * uncontended acquisition stays the plain one (one script that looks at the key alone). `queue: false` is
 * the race of earlier versions: every application's first waiter is woken by a release.
 */
describe('queue (the default on Redis): waiters of several applications wait in one line', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  const redis = new Redis(redisUrl());
  const apps: LockApp[] = [];
  const open = async (options: Partial<LockModuleOptions> = {}, count = 4): Promise<LockApp[]> => {
    const opened = await Promise.all(Array.from({ length: count }, (_, i) => createLockApp({ redis: redisUrl(), keyPrefix: prefix, holder: `app-${i}`, ...options })));
    apps.push(...opened);
    return opened;
  };
  /** The mark on `key`'s lock value: `q` once a waiter joined its line, `w` once one waits for a release notice. */
  const flagOf = async (key: string): Promise<string | undefined> => {
    const value = await redis.get(layout.lockKey(key));
    return value === null ? undefined : parseLockValue(value)?.flag;
  };

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    redis.disconnect();
  });

  it('hands a key to waiters of several applications in the order they arrived, with no fair option set', async () => {
    const group = await open();
    const queueKey = layout.queueKey(layout.lockKey('hot'));
    const holder = await group[0]!.locks.acquire('hot');
    const waiting = group[1]!.locks.acquire('hot', { waitMs: 30_000 });
    // The first waiter was turned away and joined the line, and marked the key so that its release hands
    // the key on (`q`), instead of announcing itself to waiters that race (`w`).
    await pollUntil(async () => (await redis.llen(queueKey)) === 1, 'the first waiter joins the line', 10_000);
    expect(await flagOf('hot')).toBe('q');
    await holder.release();
    await (await waiting).release();

    await expectHandedOnInArrivalOrder(group, 'hot', (length) => pollUntil(async () => (await redis.llen(queueKey)) === length, `${length} waiters in line`));
    expect(await redis.exists(queueKey, layout.lockKey('hot'))).toBe(0);
  });

  it('stands one waiter per application in the line, the others behind it in their application: the key goes round the applications in turn', async () => {
    const [holderApp, busyApp, otherApp] = await open({}, 3);
    const queueKey = layout.queueKey(layout.lockKey('round'));
    const order: string[] = [];
    const wait = (app: LockApp, name: string): Promise<Lease> =>
      app.locks.acquire('round', { waitMs: 30_000 }).then((lease) => (order.push(name), lease));
    let holder = await holderApp!.locks.acquire('round');
    const busy = [wait(busyApp!, 'b1')];
    await pollUntil(async () => (await redis.llen(queueKey)) === 1, "the busy application's first waiter in line", 10_000);
    // Four more waiters of the same application: they wait behind its first one, in the application.
    for (let i = 2; i <= 5; i++) busy.push(wait(busyApp!, `b${i}`));
    const other = wait(otherApp!, 'c1');
    await pollUntil(async () => (await redis.llen(queueKey)) === 2, "the other application's waiter in line", 10_000);
    // The line holds one entry per application, however many of its callers wait.
    expect(await redis.llen(queueKey)).toBe(2);
    for (const next of [busy[0]!, other, ...busy.slice(1)]) {
      await holder.release();
      const lease = await next;
      expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
      // Never more than one entry per application: the busy one's next caller joins once its previous one holds.
      expect(await redis.llen(queueKey)).toBeLessThanOrEqual(2);
      holder = lease;
    }
    await holder.release();
    // Round the applications: the other application's waiter came after the busy one's first, before its second.
    expect(order).toEqual(['b1', 'c1', 'b2', 'b3', 'b4', 'b5']);
  });

  it('keeps the uncontended acquisition the plain one: a single attempt takes a key that came free while a line stands (fair: true would not)', async () => {
    const [app] = await open({}, 1);
    const queueKey = layout.queueKey(layout.lockKey('expired'));
    // Another pod's live waiter, first in line, while the key is free for the moment (its holder's lease ran
    // out and the waiter has not looked yet).
    const ahead = `${Date.now() * 1000}|60000|otherpod|1|other-token|pod-b`;
    await redis.rpush(queueKey, ahead);
    await redis.pexpire(queueKey, 300_000);
    const lease = await app!.locks.tryAcquire('expired');
    expect(lease).not.toBeNull();
    expect(await redis.lrange(queueKey, 0, -1)).toEqual([ahead]);
    await lease!.release();
    await redis.del(queueKey);
  });

  it('serves the line again after a single attempt took a key that came free by expiry: the waiter in line gets it next', async () => {
    const [holderApp, waiterApp, otherApp] = await open({}, 3);
    const queueKey = layout.queueKey(layout.lockKey('crashed'));
    const crashed = await holderApp!.locks.acquire('crashed');
    const waiting = waiterApp!.locks.acquire('crashed', { waitMs: 30_000 });
    await pollUntil(async () => (await redis.llen(queueKey)) === 1, 'the waiter joins the line', 10_000);
    // The holder's pod dies and its key expires before the waiter's next look: what its lease running out
    // leaves, without a release to hand the key on.
    await redis.del(layout.lockKey('crashed'));
    const overtaker = await otherApp!.locks.tryAcquire('crashed');
    expect(overtaker).not.toBeNull();
    // Its release hands the key to the line (a look of the waiter marked it) or leaves it free for the
    // waiter's next look: either way the waiter is next, with a later fencing token.
    await overtaker!.release();
    const lease = await waiting;
    expect(lease.fencingToken).toBeGreaterThan(overtaker!.fencingToken);
    await lease.release();
    await crashed.release().catch(() => undefined);
    expect(await redis.exists(queueKey, layout.lockKey('crashed'))).toBe(0);
  });

  it('races as before with queue: false: a waiter waits for the release notice and leaves no line', async () => {
    const [first, second] = await open({ queue: false }, 2);
    const holder = await first!.locks.acquire('racing');
    const waiting = second!.locks.acquire('racing', { waitMs: 30_000 });
    await pollUntil(async () => (await flagOf('racing')) !== '-', 'the waiter marks the key');
    expect(await flagOf('racing')).toBe('w');
    expect(await redis.exists(layout.queueKey(layout.lockKey('racing')))).toBe(0);
    await holder.release();
    await (await waiting).release();
  });

  it.each([
    ['queue: false with fair: true', { redis: redisUrl(), queue: false, fair: true }, 'with fair: true, which queues every waiter'],
    ['queue: false with another store', { store: 'etcd', etcd: ['http://127.0.0.1:1'], queue: false }, "only with store 'redis'; store is 'etcd': its waiters queue in etcd anyway"],
    ['queue that is not a boolean', { redis: redisUrl(), queue: 'yes' }, 'true or false'],
  ])('refuses %s at startup, with LockConfigError naming the option', async (_, options, reason) => {
    const error = await moduleStartError(options as LockModuleOptions);
    expect(error).toBeInstanceOf(LockConfigError);
    expect(error).toMatchObject({ option: 'queue' });
    expect((error as Error).message).toContain(reason);
  });
});
