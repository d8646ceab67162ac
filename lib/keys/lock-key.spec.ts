import { LockKeyError } from '../errors/lock-key.error';
import { assertLockKey, MAX_LOCK_KEY_BYTES } from './lock-key';

describe('assertLockKey: the length limit counts UTF-8 bytes', () => {
  it('takes keys of up to the limit in bytes, in characters of 1, 2, 3 and 4 bytes', () => {
    for (const [char, bytes] of [['a', 1], ['é', 2], ['€', 3], ['😀', 4]] as const) {
      const fits = char.repeat(Math.floor(MAX_LOCK_KEY_BYTES / bytes));
      expect(() => assertLockKey(fits)).not.toThrow();
      // One character more is over the limit, whether or not the key is short in UTF-16 units.
      expect(() => assertLockKey(fits + char)).toThrow(LockKeyError);
    }
  });

  it('refuses a key of few UTF-16 units that is over the limit in bytes', () => {
    // 171 three-byte characters: 171 units, 513 bytes.
    expect(() => assertLockKey('€'.repeat(171))).toThrow(`Lock key is 513 bytes long; the limit is ${MAX_LOCK_KEY_BYTES} bytes.`);
    // 129 four-byte characters: 258 units, 516 bytes.
    expect(() => assertLockKey('😀'.repeat(129))).toThrow(LockKeyError);
  });
});
