import { listenTo, lockValue, micros, queueEntry, scriptFixture, sharedHold } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import type { LockShape } from '../../lock-shape';
import type { AcquireResult } from '../../lock-store.interface';
import type { QueuedReply } from './acquire-queued.script';
import { grantProof } from './queue.lua';
import { RELEASE_SCRIPT } from './release.script';
import { SHARED_ACQUIRE_IF_NO_QUEUE_SCRIPT, SHARED_ACQUIRE_QUEUED_SCRIPT } from './shared-acquire-queued.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('shared acquire-queued script', () => {
  const fixture = scriptFixture('shared-acquire-queued');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  type Lock = ReturnType<typeof fixture.lock>;
  const names = (lock: Lock) => ({ lockKey: lock.lockKey, fenceKey: lock.fenceKey, queueKey: lock.sharedQueueKey, grantChannelBase: lock.grants });
  const join = (lock: Lock, token: string, entry: string): Promise<QueuedReply> =>
    commands.runScript('acquire', lock.key, SHARED_ACQUIRE_QUEUED_SCRIPT, { ...names(lock), token, leaseMs: 10_000, holder: 'host:1', clockMicros: micros(), entry });
  const once = (lock: Lock, token: string, shape: LockShape): Promise<AcquireResult> =>
    commands.runScript('acquire', lock.key, SHARED_ACQUIRE_IF_NO_QUEUE_SCRIPT, { ...names(lock), token, leaseMs: 10_000, holder: 'host:1', clockMicros: micros(), shape });
  const release = (lock: Lock, token: string): Promise<boolean> =>
    commands.runScript('release', lock.key, RELEASE_SCRIPT, { lockKey: lock.lockKey, token, keepMs: 0, slotTagAndPrefix: `${lock.tag}:${fixture.layout.prefixLength}:`, clockMicros: micros() });
  const deadlineOf = async (lock: Lock, token: string): Promise<number> => Number((await redis.hget(lock.lockKey, `#${token}`))!.split('|')[0]);
  const permitHolders = async (lock: Lock) => Object.keys(await redis.hgetall(lock.lockKey)).filter((field) => field.startsWith('#')).sort();
  afterAll(() => fixture.close());

  it('grants a free permit at once without a queue, and a second delivery of that grant again with the same fencing token', async () => {
    const lock = fixture.lock();
    const entry = queueEntry('me', { shape: 'p2' });
    const first = await join(lock, 'me', entry);
    expect(first).toMatchObject({ granted: true });
    expect(await join(lock, 'me', entry)).toEqual(first);
    expect(await redis.exists(lock.sharedQueueKey)).toBe(0);
    expect(await redis.pttl(lock.lockKey)).toBeGreaterThan(9_000);
  });

  it('queues a waiter at the end while N permits are held, its shape in its entry, and turns a single attempt away', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(1), '#b', sharedHold(2)).pexpire(lock.lockKey, 60_000).exec();
    const entry = queueEntry('me', { shape: 'p2' });
    expect(await join(lock, 'me', entry)).toEqual({ granted: false, position: 1 });
    expect(await redis.lrange(lock.sharedQueueKey, 0, -1)).toEqual([entry]);
    expect(await redis.pttl(lock.sharedQueueKey)).toBeGreaterThan(0);
    // The holders' hash is marked, so that their releases serve the queue.
    expect(await redis.hget(lock.lockKey, 'q')).toBe('1');
    const denied = await once(lock, 'once', { permits: 2 });
    expect(denied.acquired).toBe(false);
    expect(await redis.llen(lock.sharedQueueKey)).toBe(1);
  });

  it('serves the queue first: a permit freed by a crashed holder goes to the live waiter in line, told on its channel, and the caller queues behind it', async () => {
    const lock = fixture.lock();
    await redis.set(lock.fenceKey, '10');
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#alive', sharedHold(1), '#crashed', sharedHold(2, Date.now() - 1)).pexpire(lock.lockKey, 60_000).exec();
    await redis.rpush(lock.sharedQueueKey, queueEntry('dead', { shape: 'p2', expiresAt: Date.now() - 1 }), queueEntry('first', { shape: 'p2', instance: 'i1', waiter: 'w1' }));
    const first = await listenTo(`${lock.grants}i1`);
    try {
      const told = first.next();
      expect(await join(lock, 'me', queueEntry('me', { shape: 'p2' }))).toEqual({ granted: false, position: 1 });
      expect(await permitHolders(lock)).toEqual(['#alive', '#first']);
      const [, fence] = (await redis.hget(lock.lockKey, '#first'))!.split('|');
      expect(Number(fence)).toBeGreaterThan(10);
      expect(await told).toBe(`g|w1|${fence}|${grantProof('first', Number(fence))}`);
      // The hold handed over lasts the waiter's heartbeat lease (2 s here), not a whole lease.
      expect(Number((await redis.hget(lock.lockKey, '#first'))!.split('|')[0]) - Date.now()).toBeLessThanOrEqual(2_000);
    } finally {
      first.close();
    }
  });

  it('lets nobody overtake the first live waiter: a waiter of 1 permit blocks one of 5 behind it, and a single attempt of 5', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(1)).pexpire(lock.lockKey, 60_000).exec();
    await redis.rpush(lock.sharedQueueKey, queueEntry('narrow', { shape: 'p1' }));
    expect(await join(lock, 'wide', queueEntry('wide', { shape: 'p5' }))).toEqual({ granted: false, position: 2 });
    expect((await once(lock, 'once', { permits: 5 })).acquired).toBe(false);
    expect(await permitHolders(lock)).toEqual(['#a']);
  });

  it('clears a writer’s mark when it joins, so the readers ahead of it in line are served, and it waits behind them', async () => {
    const lock = fixture.lock();
    // A reader holds; the writer's first attempt marked it waiting, which kept the reader in line out.
    await redis.multi().hset(lock.lockKey, 'm', 'r', '#r0', sharedHold(1), '~me', String(Date.now() + 30_000)).pexpire(lock.lockKey, 60_000).exec();
    await redis.rpush(lock.sharedQueueKey, queueEntry('rA', { shape: 'r' }));
    const entry = queueEntry('me', { shape: 'w' });
    expect(await join(lock, 'me', entry)).toEqual({ granted: false, position: 1 });
    expect(await redis.hkeys(lock.lockKey)).toEqual(expect.arrayContaining(['#r0', '#rA']));
    expect(await redis.hexists(lock.lockKey, '~me')).toBe(0);
    expect(await redis.lrange(lock.sharedQueueKey, 0, -1)).toEqual([entry]);
    // A writer's single attempt turned away marks it, as without a queue.
    expect((await once(lock, 'w2', { mode: 'write', waitingMs: 5_000 })).acquired).toBe(false);
    expect(await redis.hexists(lock.lockKey, '~w2')).toBe(1);
  });

  it('grants a single attempt a free permit when every waiter in line is dead, dropping them: a dead queue never refuses a free permit', async () => {
    const lock = fixture.lock();
    await redis.rpush(lock.sharedQueueKey, queueEntry('dead', { shape: 'p1', expiresAt: Date.now() - 1 }));
    expect(await once(lock, 'once', { permits: 1 })).toMatchObject({ acquired: true });
    expect(await redis.exists(lock.sharedQueueKey)).toBe(0);
  });

  it('queues behind a plain lock at the key, and turns a single attempt away with the plain holder’s TTL', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('-', 'plain', 7), 'PX', 10_000);
    expect(await join(lock, 'me', queueEntry('me', { shape: 'p3' }))).toEqual({ granted: false, position: 1 });
    const denied = await once(lock, 'once', { permits: 3 });
    expect(denied.acquired).toBe(false);
    if (!denied.acquired) expect(denied.ttlMs).toBeGreaterThan(9_000);
    expect(await redis.get(lock.lockKey)).toBe(lockValue('-', 'plain', 7));
  });

  it('makes a hold handed over that a repeated join finds last the whole lease before it replies the grant', async () => {
    // A join queued the waiter (its reply lost), a release handed it a permit for one heartbeat (2 s), and
    // the join comes again (re-sent after a reconnect, or retried after a stall): its caller counts a whole
    // lease from the join's send time, so the store must keep the hold at least that long.
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(1)).pexpire(lock.lockKey, 60_000).exec();
    const entry = queueEntry('me', { shape: 'p1' });
    expect(await join(lock, 'me', entry)).toEqual({ granted: false, position: 1 });
    expect(await release(lock, 'a')).toBe(true);
    expect((await deadlineOf(lock, 'me')) - Date.now()).toBeLessThanOrEqual(2_000);
    const fencingToken = Number((await redis.hget(lock.lockKey, '#me'))!.split('|')[1]);
    const sentAt = Date.now();
    expect(await join(lock, 'me', entry)).toEqual({ granted: true, fencingToken });
    expect(await deadlineOf(lock, 'me')).toBeGreaterThanOrEqual(sentAt + 10_000);
    expect(await redis.pttl(lock.lockKey)).toBeGreaterThan(9_000);
  });
});
