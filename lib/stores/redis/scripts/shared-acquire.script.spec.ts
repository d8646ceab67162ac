import { RedisCommands } from '../commands/redis-commands';
import { createRedisConnection } from '../connection/redis-client.factory';
import type { LockShape } from '../../lock-shape';
import type { AcquireResult } from '../../lock-store.interface';
import { lockValue, scriptFixture, type ScriptFixture } from '../../../../test/support/redis-script-fixtures';
import { SHARED_ACQUIRE_SCRIPT } from './shared-acquire.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('shared acquire script', () => {
  const NOW_MICROS = 1_780_000_000_000_000;
  let fixture: ScriptFixture;
  let commands: RedisCommands;
  beforeAll(() => {
    fixture = scriptFixture('shared-acquire');
    commands = new RedisCommands(createRedisConnection(fixture.redis), 5_000);
  });
  afterAll(() => fixture.close());

  const acquire = (lock: ReturnType<ScriptFixture['lock']>, shape: LockShape, token: string, leaseMs = 10_000): Promise<AcquireResult> =>
    commands.runScript('acquire', lock.key, SHARED_ACQUIRE_SCRIPT, {
      lockKey: lock.lockKey,
      fenceKey: lock.fenceKey,
      token,
      leaseMs,
      holder: 'host:1',
      clockMicros: NOW_MICROS,
      shape,
    });

  it('keeps the whole lock in one hash at the lock key, with an expiry at or past its latest deadline, fenced by the slot counter', async () => {
    const lock = fixture.lock();
    expect(await acquire(lock, { permits: 2 }, 'a', 5_000)).toEqual({ acquired: true, fencingToken: NOW_MICROS });
    expect(await acquire(lock, { permits: 2 }, 'b', 20_000)).toEqual({ acquired: true, fencingToken: NOW_MICROS + 1 });
    const hash = await fixture.redis.hgetall(lock.lockKey);
    expect(Object.keys(hash).sort()).toEqual(['#a', '#b', 'm']);
    expect(hash.m).toBe('p');
    expect(hash['#b']).toMatch(new RegExp(`^\\d+\\|${NOW_MICROS + 1}\\|host:1$`));
    expect(await fixture.redis.pttl(lock.lockKey)).toBeGreaterThan(15_000);
    expect(await fixture.redis.get(lock.fenceKey)).toBe(String(NOW_MICROS + 1));
  });

  it('drops holds whose deadline passed inside the grant, so their permits come back', async () => {
    const lock = fixture.lock();
    await acquire(lock, { permits: 1 }, 'crashed');
    await fixture.redis.hset(lock.lockKey, '#crashed', `1|${NOW_MICROS}|host:9`);
    expect((await acquire(lock, { permits: 1 }, 'next')).acquired).toBe(true);
    expect(Object.keys(await fixture.redis.hgetall(lock.lockKey)).sort()).toEqual(['#next', 'm']);
  });

  it('records a turned-away writer for its waiting bound only, and clears it when the writer is granted', async () => {
    const lock = fixture.lock();
    await acquire(lock, { mode: 'read' }, 'r');
    expect((await acquire(lock, { mode: 'write', waitingMs: 0 }, 'once')).acquired).toBe(false);
    expect(await fixture.redis.hexists(lock.lockKey, '~once')).toBe(0);
    const denied = await acquire(lock, { mode: 'write', waitingMs: 3_000 }, 'w');
    expect(denied.acquired).toBe(false);
    expect(await fixture.redis.hexists(lock.lockKey, '~w')).toBe(1);
    await fixture.redis.hdel(lock.lockKey, '#r');
    expect((await acquire(lock, { mode: 'write', waitingMs: 3_000 }, 'w')).acquired).toBe(true);
    expect(await fixture.redis.hexists(lock.lockKey, '~w')).toBe(0);
  });

  it('turns every shape away from a plain lock at the key, marking it so that its release announces itself', async () => {
    const lock = fixture.lock();
    await fixture.redis.set(lock.lockKey, lockValue('-', 'plain', 7), 'PX', 10_000);
    const denied = await acquire(lock, { mode: 'read' }, 'r');
    expect(denied.acquired).toBe(false);
    if (!denied.acquired) expect(denied.ttlMs).toBeGreaterThan(9_000);
    expect(await fixture.redis.get(lock.lockKey)).toBe(lockValue('w', 'plain', 7));
  });
});
