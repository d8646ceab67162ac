import { decodeWaiterValue, encodeWaiterValue, EtcdKeyLayout } from './etcd-key-layout';

const inRange = (range: { key: Buffer; range_end: Buffer }, key: Buffer): boolean =>
  Buffer.compare(key, range.key) >= 0 && Buffer.compare(key, range.range_end) < 0;

describe('EtcdKeyLayout', () => {
  const layout = new EtcdKeyLayout('lock:');
  const leaseId = '7587883155298236162';

  it('puts every waiter key of a lock inside that lock’s range and no other lock’s', () => {
    const waiter = layout.waiterKey('a', leaseId);
    expect(inRange(layout.lockRange('a'), waiter)).toBe(true);
    for (const other of ['a/b', 'ab', 'a:b', '']) expect(inRange(layout.lockRange('a'), layout.waiterKey(other, leaseId))).toBe(false);
    expect(inRange(layout.prefixRange(), waiter)).toBe(true);
    expect(inRange(new EtcdKeyLayout('other:').prefixRange(), waiter)).toBe(false);
  });

  it('reads the lock key back from a waiter key, and nothing from keys it did not write', () => {
    expect(layout.lockKeyOf(layout.waiterKey('order:{1}/x', leaseId))).toBe('order:{1}/x');
    expect(layout.lockKeyOf(Buffer.from('lock:order:1'))).toBeUndefined();
    expect(layout.lockKeyOf(Buffer.from('lock:order:1\u0000not-a-lease'))).toBeUndefined();
    expect(layout.lockKeyOf(Buffer.from('other:order:1\u0000' + '0'.repeat(16)))).toBeUndefined();
  });

  it('names a waiter by its lease id in fixed-width hex (queue order comes from create revisions, not names)', () => {
    expect(layout.waiterKey('k', '1').toString()).toBe('lock:k\u00000000000000000001');
    expect(layout.waiterKey('k', leaseId).toString()).toBe(`lock:k\u0000${BigInt(leaseId).toString(16).padStart(16, '0')}`);
  });

  it('keeps a key with a foreign value in the queue, with unknown details', () => {
    expect(decodeWaiterValue(encodeWaiterValue({ holder: 'pod-1:42', leaseMs: 30_000 }))).toEqual({ holder: 'pod-1:42', leaseMs: 30_000 });
    expect(decodeWaiterValue(Buffer.from('written by hand'))).toEqual({ holder: '?', leaseMs: Infinity });
  });
});

describe('EtcdKeyLayout of read/write locks and semaphores', () => {
  const layout = new EtcdKeyLayout('lock:');

  it('names shaped keys inside the lock’s range, and reads lock key and shape back', () => {
    for (const shape of ['plain', 'read', 'write', 'permits'] as const) {
      const waiter = layout.waiterKey('a', '255', shape);
      expect(inRange(layout.lockRange('a'), waiter)).toBe(true);
      expect(layout.parse(waiter)).toEqual({ key: 'a', shape });
    }
    expect(layout.waiterKey('k', '1', 'read').toString()).toBe('lock:k\u0000r0000000000000001');
    expect(layout.parse(Buffer.from('lock:k\u0000x0000000000000001'))).toBeUndefined();
  });

  it('puts every key but the readers’ of a lock in its non-reader ranges, and no reader', () => {
    const ranges = layout.nonReaderRanges('a');
    const anyRange = (key: Buffer): boolean => ranges.some((range) => inRange(range, key));
    for (const id of ['0', '1', String(2n ** 63n - 1n)]) {
      expect(anyRange(layout.waiterKey('a', id, 'plain'))).toBe(true);
      expect(anyRange(layout.waiterKey('a', id, 'write'))).toBe(true);
      expect(anyRange(layout.waiterKey('a', id, 'permits'))).toBe(true);
      expect(anyRange(layout.waiterKey('a', id, 'read'))).toBe(false);
      expect(anyRange(layout.waiterKey('ab', id, 'write'))).toBe(false);
    }
  });

  it('keeps a semaphore’s N in the value', () => {
    expect(decodeWaiterValue(encodeWaiterValue({ holder: 'h', leaseMs: 5, permits: 3 }))).toEqual({ holder: 'h', leaseMs: 5, permits: 3 });
  });
});
