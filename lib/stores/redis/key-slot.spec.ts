import calculateSlot from 'cluster-key-slot';
import { keySlot } from './key-slot';

/** Routing, fencing counters and channels all hang on the slot: it must be cluster-key-slot's, for every key. */
describe('keySlot', () => {
  const alphabet = ['a', 'b', 'z', '0', '9', ':', '{', '}', '#', '|', ' ', '~', 'é', '€', '😀', '\u007f', '\u0080'];
  const random = (length: number): string => Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');

  it('is cluster-key-slot’s slot for plain keys, hash tags (empty, unclosed, nested, repeated) and non-ASCII keys', () => {
    const fixed = ['', 'a', 'lock:order:42', '{user1000}.following', 'foo{}{bar}', 'foo{{bar}}zap', 'foo{bar}{zap}', '{', '}', '{}', 'a{b', 'a}b{c}', '{é}x', 'x{a}é', 'é{a}', '😀', 'lock:#fence:{3f}'];
    for (const key of fixed) expect([key, keySlot(key)]).toEqual([key, calculateSlot(key)]);
    for (let i = 0; i < 20_000; i++) {
      const key = random(1 + (i % 24));
      if (keySlot(key) !== calculateSlot(key)) expect([key, keySlot(key)]).toEqual([key, calculateSlot(key)]);
    }
  });
});
