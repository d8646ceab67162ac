import { lockValue, scriptFixture } from '../../../../test/support/redis-script-fixtures';
import { RedisCommands } from '../../redis/commands/redis-commands';
import { createRedisConnection } from '../../redis/connection/redis-client.factory';
import { QUORUM_FENCE_SCRIPT } from './quorum-fence.script';

/** Against the run's real Redis (REDIS_URL, started by the Jest global setup). */
describe('quorum fence script', () => {
  const fixture = scriptFixture('quorum-fence-script');
  const { redis } = fixture;
  const commands = new RedisCommands(createRedisConnection(redis), 5_000);
  const write = (lock: { lockKey: string; fenceKey: string }, token: string, fencingToken: number) =>
    commands.runScript('acquire', lock.lockKey, QUORUM_FENCE_SCRIPT, { ...lock, token, fencingToken });
  afterAll(() => fixture.close());

  it('writes the grant’s token into our lock value and raises the counter, keeping flag, holder and TTL', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('w', 'mine', 7, 'pod|1'), 'PX', 10_000);
    await redis.set(lock.fenceKey, '7');
    expect(await write(lock, 'mine', 1_780_000_000_000_123)).toBe(true);
    expect(await redis.get(lock.lockKey)).toBe(lockValue('w', 'mine', 1_780_000_000_000_123, 'pod|1'));
    expect(await redis.pttl(lock.lockKey)).toBeGreaterThan(9_000);
    expect(await redis.get(lock.fenceKey)).toBe('1780000000000123');
  });

  it('never lowers the counter (another key of the slot may have issued a higher token since)', async () => {
    const lock = fixture.lock();
    await redis.set(lock.lockKey, lockValue('-', 'mine', 5), 'PX', 10_000);
    await redis.set(lock.fenceKey, '90');
    expect(await write(lock, 'mine', 40)).toBe(true);
    expect(await redis.get(lock.fenceKey)).toBe('90');
  });

  it('writes nothing where the key is gone or held by another token', async () => {
    const [gone, taken] = [fixture.lock(), fixture.lock()];
    await redis.set(taken.lockKey, lockValue('-', 'theirs', 5), 'PX', 10_000);
    // A token that merely starts the holder's is not the holder's.
    expect(await write(taken, 'their', 50)).toBe(false);
    expect(await write(gone, 'mine', 50)).toBe(false);
    expect(await redis.get(taken.lockKey)).toBe(lockValue('-', 'theirs', 5));
    expect(await redis.exists(gone.lockKey, gone.fenceKey, taken.fenceKey)).toBe(0);
  });
});
