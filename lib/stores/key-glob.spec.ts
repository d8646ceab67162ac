import { globForRedis, globToRegExp } from './key-glob.js';

describe('key globs for list()', () => {
  it('matches * and ? and nothing else specially', () => {
    const re = globToRegExp('order:*:line:?');
    expect(re.test('order:42:line:7')).toBe(true);
    expect(re.test('order::line:7')).toBe(true);
    expect(re.test('order:42:line:77')).toBe(false);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
    expect(globToRegExp('[ab]').test('a')).toBe(false);
    expect(globToRegExp('[ab]').test('[ab]')).toBe(true);
  });

  it('escapes the Redis-only glob syntax so SCAN reads it literally', () => {
    expect(globForRedis('order:[1]\\*')).toBe('order:\\[1\\]\\\\*');
  });
});
