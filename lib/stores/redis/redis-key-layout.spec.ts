import calculateSlot from 'cluster-key-slot';
import { RedisKeyLayout } from './redis-key-layout.js';

describe('RedisKeyLayout', () => {
  const layout = new RedisKeyLayout('lock:');

  it.each(['order:1', 'order:{42}:line:7', 'a}b{c', '{}', 'ключ:🔒', 'x'.repeat(500)])(
    'puts the fencing counter of %j in the lock key’s Redis Cluster hash slot',
    (key) => {
      const lockKey = layout.lockKey(key);
      expect(calculateSlot(layout.fenceKey(lockKey))).toBe(calculateSlot(lockKey));
    },
  );

  it('names at most one counter per hash slot', () => {
    const counters = new Set(Array.from({ length: 50_000 }, (_, i) => layout.fenceKey(layout.lockKey(`k:${i}`))));
    expect(counters.size).toBeLessThanOrEqual(16_384);
  });

  it.each(['order:1', 'order:{42}:line:7', 'a}b{c', '{}', 'ключ:🔒'])(
    'puts the release channel of %j in the lock key’s hash slot, so SPUBLISH from the release script stays in one slot',
    (key) => {
      const lockKey = layout.lockKey(key);
      expect(calculateSlot(layout.releaseChannel(lockKey))).toBe(calculateSlot(lockKey));
    },
  );

  it.each(['order:1', 'order:{42}:line:7', 'a}b{c', '{}', 'ключ:🔒'])(
    'puts the fair queues of %j (plain and shaped waiters) and its grant channels in the lock key’s hash slot, so the queue scripts stay in one slot',
    (key) => {
      const lockKey = layout.lockKey(key);
      const slot = calculateSlot(lockKey);
      expect(calculateSlot(layout.queueKey(lockKey))).toBe(slot);
      expect(calculateSlot(layout.queueKey(lockKey, 'shaped'))).toBe(slot);
      expect(layout.queueNames(lockKey, 'shaped')).toEqual({ tag: layout.slotTag(lockKey), fenceKey: layout.fenceKey(lockKey), queueKey: layout.queueKey(lockKey, 'shaped') });
      expect(layout.queueKey(lockKey, 'shaped')).toMatch(/^lock:#shared-queue:\{[0-9a-z]+\}/);
      expect(calculateSlot(layout.grantChannel(layout.slotTag(lockKey), 'a1b2c3'))).toBe(slot);
      expect(layout.queueKey(lockKey)).toMatch(/^lock:#queue:\{[0-9a-z]+\}/);
    },
  );

  it('keeps counters and channels out of the namespace user keys can reach, one channel per key', () => {
    expect(layout.fenceKey('lock:x').startsWith('lock:#')).toBe(true);
    expect(layout.releaseChannel('lock:x')).toMatch(/^lock:#released:\{[0-9a-z]+\}x$/);
    expect(layout.releaseChannel('lock:x')).not.toBe(layout.releaseChannel('lock:y'));
  });
});
