import { listenTo, lockValue, micros, queueEntry, scriptFixture, sharedHold } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import { parseLockValue } from './lock-value';
import { RELEASE_SCRIPT } from './release.script';
import { grantProof } from './queue.lua';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('release script', () => {
  const fixture = scriptFixture('release-script');
  const { redis, layout } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const release = (lock: ReturnType<typeof fixture.lock>, token: string, keepMs = 0, clock = micros()): Promise<boolean> => {
    const slotTagAndPrefix = `${lock.tag}:${layout.prefixLength}:`;
    return commands.runScript('release', lock.key, RELEASE_SCRIPT, { lockKey: lock.lockKey, token, keepMs, slotTagAndPrefix, clockMicros: clock });
  };
  afterAll(() => fixture.close());

  /** The commands (scripts' included) that named `key` while `run` ran, as MONITOR saw them. */
  async function commandsSeen(key: string, run: () => Promise<unknown>): Promise<string[]> {
    const monitor = await redis.monitor();
    const seen: string[] = [];
    const marker = `${key}:done`;
    const done = new Promise<void>((resolve) =>
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args.includes(marker)) resolve();
        else if (args.includes(key)) seen.push(args[0]!.toUpperCase());
      }),
    );
    try {
      await run();
      // MONITOR shows commands in the server's order: once the marker shows, everything before it has.
      await redis.exists(marker);
      await done;
    } finally {
      monitor.disconnect();
    }
    return seen;
  }

  it('releases one hold of a read/write lock or semaphore hash by its token, announces it, and deletes the key with the last hold', async () => {
    const lock = fixture.lock();
    const far = Date.now() + 60_000;
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', `${far}|5|host:1`, '#b', `${far}|6|host:2`).pexpire(lock.lockKey, 60_000).exec();
    const channel = await listenTo(lock.releaseChannel);
    try {
      const heard = channel.next();
      expect(await release(lock, 'nobody')).toBe(false);
      expect(await release(lock, 'a')).toBe(true);
      await heard;
      expect(await redis.hkeys(lock.lockKey)).toEqual(['m', '#b']);
      expect(await release(lock, 'a')).toBe(false);
      expect(await release(lock, 'b', 5_000)).toBe(true);
      expect(await redis.hexists(lock.lockKey, '#b')).toBe(1);
      expect(await release(lock, 'b')).toBe(true);
      expect(await redis.exists(lock.lockKey)).toBe(0);
    } finally {
      channel.close();
    }
  });

  it('hands a released permit to the next live waiter of the shaped queue in the same step: fenced, its heartbeat TTL, only it told, nothing announced', async () => {
    const lock = fixture.lock();
    await redis.set(lock.fenceKey, '10');
    // Marked `q` by the waiters' joins: the releases look at the queue.
    await redis.multi().hset(lock.lockKey, 'm', 'p', 'q', '1', '#a', sharedHold(5), '#b', sharedHold(6)).pexpire(lock.lockKey, 60_000).exec();
    await redis.rpush(
      lock.sharedQueueKey,
      queueEntry('dead', { shape: 'p2', expiresAt: Date.now() - 1 }),
      queueEntry('next', { shape: 'p2', instance: 'i1', waiter: '3' }),
      queueEntry('after', { shape: 'p2' }),
    );
    const [next, released] = await Promise.all([listenTo(`${lock.grants}i1`), listenTo(lock.releaseChannel)]);
    try {
      const told = next.next();
      expect(await release(lock, 'a')).toBe(true);
      const [deadline, fence] = (await redis.hget(lock.lockKey, '#next'))!.split('|');
      expect(Number(fence)).toBeGreaterThan(10);
      expect(Number(deadline) - Date.now()).toBeLessThanOrEqual(2_000);
      expect(await told).toBe(`g|3|${fence}|${grantProof('next', Number(fence))}`);
      expect(await redis.llen(lock.sharedQueueKey)).toBe(1);
      // The freed permit went to the line, which still stands: nothing for a waiter on notifications.
      const heard = released.next();
      expect(await release(lock, 'b', 0)).toBe(true);
      expect(await redis.hexists(lock.lockKey, '#after')).toBe(1);
      expect(await redis.exists(lock.sharedQueueKey)).toBe(0);
      // The last one served emptied the line: that release is announced (a permit may be free for others),
      // and the mark goes with the line.
      await heard;
      expect(released.messages).toHaveLength(1);
      expect(await redis.hexists(lock.lockKey, 'q')).toBe(0);
    } finally {
      next.close();
      released.close();
    }
  });

  it('hands a released write lock to the readers at the head of the shaped queue together, and stops at the writer behind them', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'w', 'q', '1', '#w', sharedHold(5)).pexpire(lock.lockKey, 60_000).exec();
    const behind = [queueEntry('w2', { shape: 'w' }), queueEntry('r3', { shape: 'r' })];
    await redis.rpush(lock.sharedQueueKey, queueEntry('r1', { shape: 'r' }), queueEntry('r2', { shape: 'r' }), ...behind);
    expect(await release(lock, 'w')).toBe(true);
    expect(await redis.hget(lock.lockKey, 'm')).toBe('r');
    expect((await redis.hkeys(lock.lockKey)).filter((field) => field.startsWith('#')).sort()).toEqual(['#r1', '#r2']);
    expect(await redis.lrange(lock.sharedQueueKey, 0, -1)).toEqual(behind);
  });

  it('leaves the shaped queue alone when the hash is not marked for it: a release where nobody queued pays nothing for a queue', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(5)).pexpire(lock.lockKey, 60_000).exec();
    const entry = queueEntry('next', { shape: 'p1' });
    await redis.rpush(lock.sharedQueueKey, entry);
    expect(await release(lock, 'a')).toBe(true);
    expect(await redis.exists(lock.lockKey)).toBe(0);
    // The waiter's own next look serves it (see shared-queue-check.script.spec.ts).
    expect(await redis.lrange(lock.sharedQueueKey, 0, -1)).toEqual([entry]);
  });

  it('keeps an unmarked shaped hold for its minimum hold without a look at the queue (no LINDEX: a default store pays nothing for it)', async () => {
    const lock = fixture.lock();
    await redis.multi().hset(lock.lockKey, 'm', 'p', '#a', sharedHold(5), '#b', sharedHold(6)).pexpire(lock.lockKey, 60_000).exec();
    const seen = await commandsSeen(lock.sharedQueueKey, () => release(lock, 'a', 2_000));
    expect(seen).toEqual([]);
    expect(Number((await redis.hget(lock.lockKey, '#a'))!.split('|')[0]) - Date.now()).toBeLessThanOrEqual(2_000);
    // Marked (waiters stand in line): the kept release tells the first of them when to look again.
    await redis.hset(lock.lockKey, 'q', '1');
    await redis.rpush(lock.sharedQueueKey, queueEntry('next', { shape: 'p1', instance: 'i1', waiter: '4' }));
    const first = await listenTo(`${lock.grants}i1`);
    try {
      const told = first.next();
      expect(await release(lock, 'b', 1_500)).toBe(true);
      expect(await told).toBe('r|4|1500');
    } finally {
      first.close();
    }
  });

  it('deletes the key only for its own token, and a token that is a prefix of it is not it', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('-', 'token-12', 5), 'PX', 10_000);
    expect(await release(lock, 'token-1')).toBe(false);
    expect(await release(lock, 'someone')).toBe(false);
    expect(await release(lock, 'token-12')).toBe(true);
    expect(await redis.exists(lock.lockKey)).toBe(0);
    expect(await release(lock, 'token-12')).toBe(false);
  });

  it('announces nothing when nobody waited, and on the release channel when a waiter marked the value', async () => {
    const quiet = fixture.lock();
    const marked = fixture.lock();
    const quietChannel = await listenTo(quiet.releaseChannel);
    const markedChannel = await listenTo(marked.releaseChannel);
    try {
      await redis.set(quiet.lockKey, lockValue('-', 'a', 1), 'PX', 10_000);
      await redis.set(marked.lockKey, lockValue('w', 'b', 1), 'PX', 10_000);
      const heard = markedChannel.next();
      expect(await release(quiet, 'a')).toBe(true);
      expect(await release(marked, 'b')).toBe(true);
      await heard;
      expect(quietChannel.messages).toEqual([]);
    } finally {
      quietChannel.close();
      markedChannel.close();
    }
  });

  it('keeps the key for the minimum hold instead of deleting it, and announces nothing then', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('w', 'a', 1), 'PX', 10_000);
    expect(await release(lock, 'a', 2_000)).toBe(true);
    const ttl = await redis.pttl(lock.lockKey);
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });

  it('hands a queued key to the first live waiter in the same step: new fencing token, its hand-off TTL, only it told', async () => {
    const lock = fixture.lock();
    await redis.set(lock.fenceKey, '100');
    await redis.set(lock.lockKey, lockValue('q', 'holder', 100), 'PX', 10_000);
    const later = queueEntry('later', { instance: 'i3', waiter: 'w9' });
    await redis.rpush(
      lock.queueKey,
      queueEntry('dead', { expiresAt: Date.now() - 1, instance: 'i1', waiter: 'w0' }),
      queueEntry('next', { ttlMs: 1_500, instance: 'i2', waiter: 'w7', holder: 'pod-2' }),
      later,
    );
    const next = await listenTo(`${lock.grants}i2`);
    const others = await Promise.all([listenTo(`${lock.grants}i1`), listenTo(`${lock.grants}i3`), listenTo(lock.releaseChannel)]);
    try {
      const told = next.next();
      expect(await release(lock, 'holder')).toBe(true);
      const stored = parseLockValue((await redis.get(lock.lockKey))!);
      expect(stored).toMatchObject({ flag: 'q', token: 'next', holder: 'pod-2' });
      expect(stored!.fencingToken).toBeGreaterThan(100);
      const handedTtl = await redis.pttl(lock.lockKey);
      // A TTL, and the waiter's hand-off one (-1, no TTL at all, would keep the key for good).
      expect(handedTtl).toBeGreaterThan(0);
      expect(handedTtl).toBeLessThanOrEqual(1_500);
      expect(await told).toBe(`g|w7|${stored!.fencingToken}|${grantProof('next', stored!.fencingToken)}`);
      expect(await redis.lrange(lock.queueKey, 0, -1)).toEqual([later]);
      expect(others.flatMap((channel) => channel.messages)).toEqual([]);
    } finally {
      next.close();
      for (const channel of others) channel.close();
    }
  });

  it('deletes a queued key whose queue holds nobody alive, and announces it on the release channel', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'holder', 1), 'PX', 10_000);
    await redis.rpush(lock.queueKey, queueEntry('dead', { expiresAt: Date.now() - 10 }));
    const channel = await listenTo(lock.releaseChannel);
    try {
      const heard = channel.next();
      expect(await release(lock, 'holder')).toBe(true);
      await heard;
      expect(await redis.exists(lock.lockKey, lock.queueKey)).toBe(0);
    } finally {
      channel.close();
    }
  });

  it('keeps a queued key for the minimum hold and tells the first waiter when to look again', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('q', 'holder', 1), 'PX', 10_000);
    await redis.rpush(lock.queueKey, queueEntry('first', { instance: 'i1', waiter: 'w1' }), queueEntry('second', { instance: 'i1', waiter: 'w2' }));
    const channel = await listenTo(`${lock.grants}i1`);
    try {
      const told = channel.next();
      expect(await release(lock, 'holder', 700)).toBe(true);
      expect(await told).toBe('r|w1|700');
      expect(parseLockValue((await redis.get(lock.lockKey))!)?.token).toBe('holder');
      expect(await redis.llen(lock.queueKey)).toBe(2);
    } finally {
      channel.close();
    }
  });

  it('does not release a lock of an earlier version (a hash) or a foreign value', async () => {
    const old = fixture.lock();
    await redis.multi().hset(old.lockKey, 't', 'old', 'f', '1', 'h', 'x').pexpire(old.lockKey, 10_000).exec();
    expect(await release(old, 'old')).toBe(false);
    expect(await redis.hget(old.lockKey, 't')).toBe('old');
    const foreign = fixture.lock();
    await redis.set(foreign.lockKey, 'hello');
    expect(await release(foreign, 'hello')).toBe(false);
    expect(await redis.get(foreign.lockKey)).toBe('hello');
  });
});
