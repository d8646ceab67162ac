import { lockValue, micros, queueEntry, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import type { AcquireResult } from '../../lock-store.interface';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { ACQUIRE_IF_NO_QUEUE_SCRIPT, ACQUIRE_QUEUED_SCRIPT, type QueuedReply } from './acquire-queued.script';
import { parseLockValue } from './lock-value';
import { RELEASE_SCRIPT } from './release.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('acquire-queued script', () => {
  const fixture = scriptFixture('acquire-queued-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  type Lock = ReturnType<typeof fixture.lock>;
  const call = (lock: Lock, token: string) => ({ ...lock, token, leaseMs: 10_000, holder: 'pod-1', clockMicros: micros() });
  const join = (lock: Lock, token: string, entry: string): Promise<QueuedReply> =>
    commands.runScript('acquire', lock.key, ACQUIRE_QUEUED_SCRIPT, { ...call(lock, token), entry });
  const once = (lock: Lock, token: string): Promise<AcquireResult> => commands.runScript('acquire', lock.key, ACQUIRE_IF_NO_QUEUE_SCRIPT, call(lock, token));
  const release = (lock: Lock, token: string): Promise<boolean> =>
    commands.runScript('release', lock.key, RELEASE_SCRIPT, { lockKey: lock.lockKey, token, keepMs: 0, slotTagAndPrefix: `${lock.tag}:${fixture.layout.prefixLength}:`, clockMicros: micros() });
  afterAll(() => fixture.close());

  it('grants a free key without a queue as the plain acquire does', async () => {
    const lock = fixture.lock();
    const reply = await join(lock, 'a', queueEntry('a'));
    expect(reply).toMatchObject({ granted: true });
    expect(parseLockValue((await redis.get(lock.lockKey))!)).toMatchObject({ flag: '-', token: 'a', holder: 'pod-1' });
    expect(await redis.exists(lock.queueKey)).toBe(0);
  });

  it('starts the queue behind a holder and marks the holder, so that its release hands over', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('-', 'holder', 1), 'PX', 10_000);
    const entry = queueEntry('b');
    expect(await join(lock, 'b', entry)).toEqual({ granted: false, position: 1 });
    expect(await redis.lrange(lock.queueKey, 0, -1)).toEqual([entry]);
    expect(await redis.pttl(lock.queueKey)).toBeGreaterThan(0);
    expect(parseLockValue((await redis.get(lock.lockKey))!)).toMatchObject({ flag: 'q', token: 'holder' });
  });

  it('joins an existing queue at its end, even when the key is free at that moment: nobody overtakes', async () => {
    const lock = fixture.lock();
    await redis.rpush(lock.queueKey, queueEntry('first'));
    expect(await join(lock, 'c', queueEntry('c'))).toEqual({ granted: false, position: 2 });
    expect(await redis.exists(lock.lockKey)).toBe(0);
  });

  it('turns a single attempt away while waiters stand in line, and does not queue it', async () => {
    const lock = fixture.lock();
    await redis.rpush(lock.queueKey, queueEntry('first'));
    expect(await once(lock, 'd')).toEqual({ acquired: false, ttlMs: -1 });
    expect(await redis.llen(lock.queueKey)).toBe(1);
    const held = fixture.lock();
    await redis.set(held.lockKey, lockValue('-', 'holder', 1), 'PX', 10_000);
    const denied = await once(held, 'd');
    expect(denied.acquired || denied.ttlMs).toBeGreaterThan(9_000);
    expect(await redis.exists(held.queueKey)).toBe(0);
  });

  it('grants a second delivery of the same grant again, with the same fencing token, without queueing it', async () => {
    const lock = fixture.lock();
    const first = await join(lock, 'e', queueEntry('e'));
    expect(await join(lock, 'e', queueEntry('e'))).toEqual(first);
    expect(await redis.exists(lock.queueKey)).toBe(0);
  });

  it('makes a hand-off that a repeated join finds (the waiter stood alone, its queue gone) last the whole lease before it replies the grant', async () => {
    // A join queued the waiter (its reply lost), the holder's release handed it the key for one heartbeat
    // (2 s), and the join comes again (re-sent after a reconnect, or retried after a stall): its caller counts
    // a whole lease from the join's send time, so the store must keep the key at least that long.
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('-', 'holder', 1), 'PX', 10_000);
    const entry = queueEntry('me');
    expect(await join(lock, 'me', entry)).toEqual({ granted: false, position: 1 });
    expect(await release(lock, 'holder')).toBe(true);
    expect(parseLockValue((await redis.get(lock.lockKey))!)).toMatchObject({ token: 'me' });
    expect(await redis.pttl(lock.lockKey)).toBeLessThanOrEqual(2_000);
    const { fencingToken } = parseLockValue((await redis.get(lock.lockKey))!)!;
    expect(await join(lock, 'me', entry)).toEqual({ granted: true, fencingToken });
    expect(await redis.pttl(lock.lockKey)).toBeGreaterThan(9_000);
  });
});
