import { LockKeyError } from '../errors/lock-key.error.js';
import { decodeKeySegment, encodeKeySegment, isEncodedSegmentChar } from './key-segment.encoding.js';

describe('encodeKeySegment', () => {
  it('keeps letters, digits, "_", "." and "-" readable', () => {
    expect(encodeKeySegment('Order_42.v-1')).toBe('Order_42.v-1');
    expect(encodeKeySegment('3f2b7c1e-8a9d-4e5f-b6c7-d8e9f0a1b2c3')).toBe('3f2b7c1e-8a9d-4e5f-b6c7-d8e9f0a1b2c3');
  });

  it('escapes every separator, glob, hash-tag, reserved and whitespace character', () => {
    expect(encodeKeySegment(':')).toBe('%3A');
    expect(encodeKeySegment('{x}')).toBe('%7Bx%7D');
    expect(encodeKeySegment('*?[]')).toBe('%2A%3F%5B%5D');
    expect(encodeKeySegment('#')).toBe('%23');
    expect(encodeKeySegment('%')).toBe('%25');
    expect(encodeKeySegment('a b\n')).toBe('a%20b%0A');
  });

  it('encodes unicode as the percent-escapes of its UTF-8 bytes, so keys stay ASCII', () => {
    expect(encodeKeySegment('é')).toBe('%C3%A9');
    expect(encodeKeySegment('😀')).toBe('%F0%9F%98%80');
    expect(encodeKeySegment('e\u0301')).not.toBe(encodeKeySegment('é'));
  });

  it('gives numbers and bigints their decimal text', () => {
    expect(encodeKeySegment(7)).toBe('7');
    expect(encodeKeySegment(-1.25)).toBe('-1.25');
    expect(encodeKeySegment(12345678901234567890n)).toBe('12345678901234567890');
  });

  it('rejects values that cannot name an object', () => {
    expect(() => encodeKeySegment('')).toThrow(LockKeyError);
    expect(() => encodeKeySegment(NaN)).toThrow(LockKeyError);
    expect(() => encodeKeySegment('\uDC00x')).toThrow(LockKeyError);
    expect(() => encodeKeySegment(undefined as never)).toThrow(LockKeyError);
  });

  it('only ever outputs characters from its own alphabet, and decodes back', () => {
    const samples = ['a:b', '%25', '%%', '{}*#', 'line\r\n', '中文', '😀:😀', ' ', '~!@$^&()+=[]\\|;\'",<>/?`'];
    for (const sample of samples) {
      const encoded = encodeKeySegment(sample);
      expect([...encoded].every(isEncodedSegmentChar)).toBe(true);
      expect(decodeKeySegment(encoded)).toBe(sample);
    }
  });

  it('maps distinct strings to distinct segments (all strings over a small adversarial alphabet)', () => {
    const alphabet = ['%', '2', '5', 'A', '3', ':', 'é'];
    const strings = new Set<string>();
    const grow = (prefix: string, depth: number): void => {
      if (prefix) strings.add(prefix);
      if (depth === 0) return;
      for (const char of alphabet) grow(prefix + char, depth - 1);
    };
    grow('', 4);
    const encoded = new Set([...strings].map((s) => encodeKeySegment(s)));
    expect(encoded.size).toBe(strings.size);
  });
});
