import { LockKeyError } from '../errors/lock-key.error';
import { lockOrder } from './lock-order';

describe('lockOrder', () => {
  it('orders keys the same way whatever order they are named in, and collapses duplicates', () => {
    expect(lockOrder(['account:b', 'account:a', 'account:b'])).toEqual(['account:a', 'account:b']);
    expect(lockOrder(['account:a', 'account:b'])).toEqual(lockOrder(['account:b', 'account:a']));
  });

  it('orders by the bytes of the encoded key, not by UTF-16 code units', () => {
    // U+FFFD is one code unit above a surrogate in UTF-16, but its UTF-8 bytes (EF ..) sort before the
    // four-byte encoding of an emoji (F0 ..).
    expect(lockOrder(['k:\u{1F600}', 'k:\uFFFD'])).toEqual(['k:\uFFFD', 'k:\u{1F600}']);
  });

  it('rejects an empty list, a non-array and any invalid key with LockKeyError', () => {
    expect(() => lockOrder([])).toThrow(LockKeyError);
    expect(() => lockOrder('account:a')).toThrow(LockKeyError);
    expect(() => lockOrder(['account:a', ''])).toThrow(LockKeyError);
    expect(() => lockOrder(['account:a', 42])).toThrow(LockKeyError);
  });
});
