import { LockConfigError } from '../errors/lock-config.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { compileKeyTemplate, type KeyTemplateTarget } from './key-template.js';
import { decodeKeySegment } from './key-segment.encoding.js';
import { MAX_LOCK_KEY_BYTES } from './lock-key.js';

const pay: KeyTemplateTarget = { label: 'OrderService.pay', parameterNames: ['orderId', 'amount'] };
const refund: KeyTemplateTarget = { label: 'OrderService.refund', parameterNames: ['dto', 'lineNo'] };

function startupError(template: unknown, target: KeyTemplateTarget = pay): LockConfigError {
  try {
    compileKeyTemplate(template, target);
  } catch (error) {
    expect(error).toBeInstanceOf(LockConfigError);
    return error as LockConfigError;
  }
  throw new Error(`template ${String(template)} compiled`);
}

function callError(template: string, target: KeyTemplateTarget, args: unknown[]): LockKeyError {
  const compiled = compileKeyTemplate(template, target);
  try {
    compiled.render(args);
  } catch (error) {
    expect(error).toBeInstanceOf(LockKeyError);
    return error as LockKeyError;
  }
  throw new Error('render succeeded');
}

describe('compileKeyTemplate: building keys', () => {
  it('substitutes placeholders by parameter name, not by position in the template', () => {
    const template = compileKeyTemplate('amount:{amount}:order:{orderId}', pay);
    expect(template.render(['o-1', 25])).toBe('amount:25:order:o-1');
  });

  it('reads nested paths and array indices, with several placeholders', () => {
    const template = compileKeyTemplate('order:{dto.order.id}:line:{lineNo}:first:{dto.items.0}', refund);
    expect(template.render([{ order: { id: 'A7' }, items: ['x'] }, 3])).toBe('order:A7:line:3:first:x');
  });

  it('keeps a template without placeholders as a constant key', () => {
    expect(compileKeyTemplate('job:close-expired-orders', { label: 'Job.run', parameterNames: [] }).render([])).toBe(
      'job:close-expired-orders',
    );
  });

  it('accepts strings, finite numbers and bigints; the same id typed as number, bigint or string is the same key', () => {
    const template = compileKeyTemplate('order:{orderId}', pay);
    expect(template.render([42])).toBe('order:42');
    expect(template.render([42n])).toBe('order:42');
    expect(template.render(['42'])).toBe('order:42');
    expect(template.render([-0])).toBe('order:0');
    expect(template.render([1.5])).toBe('order:1.5');
  });

  it('works when parameter names cannot be read as long as there are no placeholders', () => {
    expect(compileKeyTemplate('job:x', { label: 'Job.run', parameterNames: undefined }).render([])).toBe('job:x');
  });
});

describe('compileKeyTemplate: bad templates are startup errors naming class, method and template', () => {
  const cases: Array<[string, unknown, RegExp, KeyTemplateTarget?]> = [
    ['a placeholder naming no parameter', 'order:{ordrId}', /\{ordrId\} names none.*pay\(orderId, amount\)|pay\(orderId, amount\).*\{ordrId\} names none/],
    ['an unclosed brace', 'order:{orderId', /closing "}"/],
    ['a stray closing brace', 'order:orderId}', /closes nothing/],
    ['nested braces', 'order:{a{orderId}}', /closing "}"/],
    ['an empty placeholder', 'order:{}', /not a parameter path/],
    ['whitespace in a placeholder', 'order:{ orderId }', /not a parameter path/],
    ['a malformed path', 'order:{orderId..id}', /not a parameter path/],
    ['a path starting with an index', 'order:{0}', /not a parameter path/],
    ['adjacent placeholders', '{orderId}{amount}', /separated by a character/],
    ['placeholders separated only by value characters', '{orderId}-{amount}', /separated by a character/],
    ['placeholders separated only by "%"', '{orderId}%{amount}', /separated by a character/],
    ['an empty template', '', /non-empty template/],
    ['a non-string key', 42, /non-empty template/],
    ['a reserved "#" prefix', '#fence:{orderId}', /reserved/],
    ['control characters', 'order:\n{orderId}', /control characters/],
    ['a template longer than the key limit', `${'x'.repeat(MAX_LOCK_KEY_BYTES + 1)}:{orderId}`, /shorter than/],
    [
      'placeholders when parameter names are unreadable',
      'order:{orderId}',
      /cannot be read.*function form/,
      { label: 'OrderService.pay', parameterNames: undefined },
    ],
    [
      'a placeholder naming a destructured parameter',
      'order:{id}',
      /refund\(<destructured>\)/,
      { label: 'OrderService.refund', parameterNames: [undefined] },
    ],
  ];

  it.each(cases)('rejects %s', (_name, template, message, target = pay) => {
    const error = startupError(template, target);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(target.label);
    if (typeof template === 'string' && template) expect(error.message).toContain(JSON.stringify(template));
  });

  it('accepts placeholders separated by any character a value cannot contain', () => {
    for (const separator of [':', '/', '|', '#', '@', ',', ' ', '=', '-:-']) {
      expect(() => compileKeyTemplate(`{orderId}${separator}{amount}`, pay)).not.toThrow();
    }
  });
});

describe('compileKeyTemplate: bad values are call-time LockKeyErrors naming the placeholder', () => {
  const cases: Array<[string, unknown[], RegExp]> = [
    ['undefined', [undefined], /\{orderId\} is undefined/],
    ['null', [null], /\{orderId\} is null/],
    ["''", [''], /\{orderId\} is an empty string/],
    ['an object', [{ id: 1 }], /\{orderId\} is an object/],
    ['an array', [['a']], /\{orderId\} is an array/],
    ['a boolean', [true], /\{orderId\} is a boolean/],
    ['NaN', [NaN], /\{orderId\} is NaN/],
    ['Infinity', [Infinity], /\{orderId\} is Infinity/],
    ['a function', [() => 1], /\{orderId\} is a function/],
    ['a symbol', [Symbol('x')], /\{orderId\} is a symbol/],
    ['a lone surrogate', ['\uD800'], /not well-formed/],
    ['a missing argument', [], /\{orderId\} is undefined/],
  ];

  it.each(cases)('rejects %s', (_name, args, message) => {
    const error = callError('order:{orderId}', pay, args);
    expect(error.message).toMatch(message);
    expect(error.message).toContain('OrderService.pay');
    expect(error.message).toContain('"order:{orderId}"');
  });

  it('names the part of a nested path that was null or undefined', () => {
    expect(callError('order:{dto.order.id}', refund, [{}]).message).toMatch(/\{dto\.order\.id\} cannot be read: dto\.order is undefined/);
    expect(callError('order:{dto.order.id}', refund, [null]).message).toMatch(/dto is null/);
    expect(callError('order:{dto.order.id}', refund, [{ order: { id: undefined } }]).message).toMatch(/\{dto\.order\.id\} is undefined/);
    expect(callError('order:{dto.order.id}', refund, [{ order: { id: { nested: 1 } } }]).message).toMatch(/is an object/);
  });

  it('never produces "undefined" or "[object Object]" in a key', () => {
    const template = compileKeyTemplate('order:{orderId}', pay);
    for (const value of [undefined, null, {}, [], [1], new Date(0), Object.create(null)]) {
      expect(() => template.render([value])).toThrow(LockKeyError);
    }
  });

  it('rejects a key over the byte limit once values are encoded', () => {
    const template = compileKeyTemplate('order:{orderId}', pay);
    expect(() => template.render(['x'.repeat(MAX_LOCK_KEY_BYTES - 'order:'.length)])).not.toThrow();
    expect(() => template.render(['x'.repeat(MAX_LOCK_KEY_BYTES - 'order:'.length + 1)])).toThrow(/limit is 512 bytes/);
    // Each ':' becomes three bytes: 200 of them exceed the limit although the raw value is short.
    expect(() => template.render([':'.repeat(200)])).toThrow(LockKeyError);
  });
});

describe('compileKeyTemplate: injectivity (no two argument tuples share a key, no value leaves its namespace)', () => {
  const line: KeyTemplateTarget = { label: 'OrderService.line', parameterNames: ['a', 'b'] };
  const template = compileKeyTemplate('order:{a}:line:{b}', line);

  it('keeps adversarial values apart', () => {
    const tuples: Array<[string, string]> = [
      ['1', '2'],
      ['1:line:2', 'x'],
      ['1', '2:line:x'],
      ['1:line', '2'],
      ['1%3Aline', '2'],
      ['1%253Aline', '2'],
      ['{1}', '2'],
      ['1}', '{2'],
      ['*', '2'],
      ['1*', '2'],
      ['1\n', '2'],
      ['1\r\n', '2'],
      ['#1', '2'],
      ['é', '2'],
      ['e\u0301', '2'],
      ['😀', '2'],
      ['\u0000', '2'],
      [' 1', '2'],
      ['1 ', '2'],
      ['..', '2'],
      ['/', '2'],
    ];
    const keys = tuples.map((tuple) => template.render(tuple));
    expect(new Set(keys).size).toBe(tuples.length);
    for (const [i, key] of keys.entries()) {
      // Every key has exactly the template's structure: the values never add a ':' or a brace.
      const match = /^order:([A-Za-z0-9_.%-]+):line:([A-Za-z0-9_.%-]+)$/.exec(key);
      expect(match).not.toBeNull();
      expect([decodeKeySegment(match![1]!), decodeKeySegment(match![2]!)]).toEqual(tuples[i]);
    }
  });

  it('decodes every key back to its arguments for random adversarial tuples', () => {
    const alphabet = ['a', 'Z', '0', ':', '%', '{', '}', '*', '#', '\n', ' ', '.', '-', '_', 'é', '😀', 'line', '3A', '%3A'];
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const word = (): string => Array.from({ length: 1 + random(5) }, () => alphabet[random(alphabet.length)]).join('');
    const seen = new Map<string, string>();
    for (let i = 0; i < 3000; i++) {
      const tuple: [string, string] = [word(), word()];
      const key = template.render(tuple);
      const previous = seen.get(key);
      if (previous !== undefined) expect(previous).toBe(JSON.stringify(tuple));
      seen.set(key, JSON.stringify(tuple));
      const [, a, b] = /^order:([^:]+):line:([^:]+)$/.exec(key)!;
      expect([decodeKeySegment(a!), decodeKeySegment(b!)]).toEqual(tuple);
    }
  });
});
