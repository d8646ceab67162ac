import { LockKeyError } from '../errors/lock-key.error.js';
import { MAX_LOCK_KEY_BYTES } from './lock-key.js';

/**
 * How an argument value becomes part of a lock key.
 *
 * A value is first turned into its text: a string stays as it is, a finite number or a bigint becomes its
 * decimal text. Then every character outside `A-Z a-z 0-9 _ . -` is replaced by the percent-escapes of its
 * UTF-8 bytes (`:` → `%3A`, `%` → `%25`, `é` → `%C3%A9`, newline → `%0A`).
 *
 * Why this is safe:
 * - **Injective**: `%` itself is escaped, so decoding is unambiguous; two different texts never encode to
 *   the same segment.
 * - **Contained**: an encoded segment only contains `A-Z a-z 0-9 _ . - %`. It can never contain `:`, `/`,
 *   `{`, `}` (Redis Cluster hash tags), `*`, `?`, `[` (SCAN patterns), `#` (the library's reserved keys),
 *   whitespace or control characters, so a value cannot move its key into another namespace or slot.
 * - **ASCII**: keys built from user input are plain ASCII whatever the input's script.
 *
 * Deliberate choice: `42`, `42n` and `'42'` have the same text and therefore the same segment. The same
 * order id arriving as a number from a queue and as a string from a route parameter must lock the same
 * order; distinct keys there would silently break mutual exclusion.
 */
export type KeySegmentValue = string | number | bigint;

/** Characters kept as they are; everything else is percent-escaped. */
const KEPT = /^[A-Za-z0-9_.-]$/;

/** A lone surrogate cannot be encoded as UTF-8 without being replaced, which would merge distinct values. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True for characters an encoded segment may contain: the kept set plus `%`. */
export function isEncodedSegmentChar(char: string): boolean {
  return char === '%' || KEPT.test(char);
}

/** The text a segment value stands for; throws `LockKeyError` for values that cannot name an object. */
export function segmentText(value: unknown, describe: () => string): string {
  if (typeof value === 'string') {
    if (value.length === 0) throw new LockKeyError(`${describe()} is an empty string.`);
    // Before the whole-string look for surrogates: a value no key can hold is refused at the cost of a
    // length check, whatever its size (see encodeKeySegment).
    if (value.length > MAX_LOCK_KEY_BYTES) throw tooLong(describe(), value.length);
    if (LONE_SURROGATE.test(value)) throw new LockKeyError(`${describe()} is not well-formed Unicode (lone surrogate).`);
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new LockKeyError(`${describe()} is ${value}.`);
    return String(value); // String(-0) is '0'
  }
  if (typeof value === 'bigint') return value.toString();
  throw new LockKeyError(`${describe()} is ${describeRejected(value)}.`);
}

/**
 * Encodes one value for use inside a lock key. Exported for the function form of `key`, so hand-built keys
 * get the same protection as templates: `key: (id: string) => \`order:${encodeKeySegment(id)}\``.
 */
export function encodeKeySegment(value: KeySegmentValue, maxLength: number = MAX_LOCK_KEY_BYTES): string {
  return encodeSegmentText(segmentText(value, () => 'Lock key segment'), maxLength, () => 'Lock key segment');
}

/**
 * Encodes a segment's text, refusing it as soon as its encoding is sure to exceed `maxLength` characters
 * (what is left of the key's limit): encoding never shortens a text (a kept character stays one, any
 * other becomes at least three), so a text longer than that is refused before any of it is encoded, and
 * a shorter one as soon as its encoding grows past it. A value of megabytes costs a length check, not
 * the event loop.
 */
export function encodeSegmentText(text: string, maxLength: number, describe: () => string): string {
  if (text.length > maxLength) throw tooLong(describe(), text.length);
  let encoded = '';
  for (const char of text) {
    if (encoded.length > maxLength) throw tooLong(describe(), text.length);
    if (KEPT.test(char)) {
      encoded += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** The inverse of {@link encodeKeySegment}: that one exists proves the encoding injective, and the specs round-trip through it. */
export function decodeKeySegment(encoded: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const char = encoded[i]!;
    if (char === '%') {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new LockKeyError(`Not an encoded key segment: ${JSON.stringify(encoded)}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (KEPT.test(char)) {
      bytes.push(char.charCodeAt(0));
    } else {
      throw new LockKeyError(`Not an encoded key segment: ${JSON.stringify(encoded)}`);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function tooLong(what: string, length: number): LockKeyError {
  return new LockKeyError(`${what} is ${length} characters long: no lock key holds it, the limit is ${MAX_LOCK_KEY_BYTES} bytes. Lock on a shorter identifier.`);
}

function describeRejected(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array (name one element, e.g. {items.0.id})';
  if (typeof value === 'object') return 'an object (name one of its properties, e.g. {dto.id})';
  if (typeof value === 'boolean') return `a boolean (${value})`;
  return `a ${typeof value}`;
}
