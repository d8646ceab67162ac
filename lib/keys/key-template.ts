import { LockConfigError } from '../errors/lock-config.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { CONTROL_CHARACTERS, MAX_LOCK_KEY_BYTES, RESERVED_KEY_PREFIX } from './lock-key.js';
import { encodeSegmentText, isEncodedSegmentChar, segmentText } from './key-segment.encoding.js';

/** The method a template belongs to, as far as the template needs to know it. */
export interface KeyTemplateTarget {
  /** `ClassName.method`, for messages. */
  readonly label: string;
  /**
   * Parameter names by position (`undefined` for a destructured parameter, `...name` for the rest
   * parameter); `undefined` if unreadable.
   */
  readonly parameterNames: readonly (string | undefined)[] | undefined;
}

/** A template checked once at startup; `render` runs on every call. */
export interface CompiledKeyTemplate {
  readonly source: string;
  /** The key for one call's arguments; throws `LockKeyError` for values that cannot name an object. */
  render(args: readonly unknown[]): string;
}

interface TextPart {
  readonly text: string;
}
interface PlaceholderPart {
  readonly placeholder: string;
  readonly path: readonly string[];
  /** Index of the parameter named by the path's first segment. */
  readonly parameter: number;
  /** The parameter is the rest parameter: it names the array of the arguments from `parameter` on. */
  readonly rest?: boolean;
}
type Part = TextPart | PlaceholderPart;

// An identifier (as in JavaScript) or an array index.
const PATH_SEGMENT = /^(?:[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*|0|[1-9][0-9]*)$/u;
const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u;

/**
 * Compiles a key template such as `order:{orderId}` or `order:{dto.order.id}:line:{lineNo}`.
 *
 * - Text outside braces is kept as written; a `{placeholder}` names a parameter of the method, optionally
 *   followed by a property path (`.id`, `.items.0`). Braces cannot appear in the text itself.
 * - Every placeholder value is encoded (see `key-segment.encoding.ts`), and two placeholders must be
 *   separated by text containing a character an encoded value never contains (e.g. `:`). Together this
 *   makes the key injective: different argument values never produce the same key.
 * - Every problem is a `LockConfigError` naming the method and the template, raised at startup.
 */
export function compileKeyTemplate(template: unknown, target: KeyTemplateTarget): CompiledKeyTemplate {
  const fail = (expected: string): never => {
    throw new LockConfigError(`key of ${target.label}`, template, expected);
  };
  if (typeof template !== 'string' || template.length === 0) {
    return fail('a non-empty template string such as "order:{orderId}", or a key function');
  }
  const parts = parse(template, fail);
  const placeholders = parts.filter((part) => 'placeholder' in part);
  const texts = parts.filter((part) => 'text' in part);

  const literal = texts.map((part) => part.text).join('');
  if (CONTROL_CHARACTERS.test(literal)) fail('a template without control characters');
  if (Buffer.byteLength(literal, 'utf8') > MAX_LOCK_KEY_BYTES) fail(`a template shorter than ${MAX_LOCK_KEY_BYTES} bytes`);
  const first = parts[0];
  if (first && 'text' in first && first.text.startsWith(RESERVED_KEY_PREFIX)) {
    fail(`a template that does not start with "${RESERVED_KEY_PREFIX}" (reserved for the library's own keys)`);
  }
  parts.forEach((part, i) => {
    if (!('placeholder' in part) || i === 0) return;
    const before = parts[i - 1]!;
    const previous = 'placeholder' in before ? before : parts[i - 2];
    if (!previous || !('placeholder' in previous)) return;
    if ('placeholder' in before || [...before.text].every(isEncodedSegmentChar)) fail(separatorHint(previous.placeholder, part.placeholder));
  });

  if (placeholders.length > 0 && target.parameterNames === undefined) {
    fail(
      `placeholders naming parameters, but the parameter names of ${target.label} cannot be read from its source ` +
        '(a native, bound or proxied function); use the function form: key: (...args) => string',
    );
  }
  const names = target.parameterNames ?? [];
  const resolved: Part[] = parts.map((part) => {
    if ('text' in part) return part;
    const named = names.indexOf(part.path[0]!);
    const rest = named < 0 ? names.indexOf(`...${part.path[0]!}`) : -1;
    const parameter = named >= 0 ? named : rest;
    if (parameter < 0) {
      return fail(
        `every placeholder to name a parameter of ${describeSignature(target)}; {${part.placeholder}} names none ` +
          '(if the build minifies parameter names, use the function form: key: (...args) => string)',
      );
    }
    return { ...part, parameter, rest: rest >= 0 };
  });

  const source = template;
  return {
    source,
    render(args) {
      let key = '';
      for (const part of resolved) {
        if ('text' in part) {
          key += part.text;
          continue;
        }
        // What is left of the limit (encoded segments are ASCII: their length is their size in bytes).
        const left = MAX_LOCK_KEY_BYTES - Buffer.byteLength(key, 'utf8');
        const describe = (): string => `Lock key "${source}" of ${target.label}: {${part.placeholder}}`;
        key += encodeSegmentText(valueAt(part, args, describe), Math.max(0, left), describe);
      }
      const bytes = Buffer.byteLength(key, 'utf8');
      if (bytes > MAX_LOCK_KEY_BYTES) {
        throw new LockKeyError(
          `Lock key of ${target.label} (template "${source}") is ${bytes} bytes long; the limit is ${MAX_LOCK_KEY_BYTES} bytes. ` +
            'Lock on a shorter identifier.',
        );
      }
      return key;
    },
  };
}

/** Splits the template into text and placeholders; parameters are resolved afterwards. */
function parse(template: string, fail: (expected: string) => never): Part[] {
  const parts: Part[] = [];
  let text = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    if (char === '}') fail(`braces only around placeholders; the "}" at position ${i} closes nothing`);
    if (char !== '{') {
      text += char;
      continue;
    }
    const end = template.indexOf('}', i + 1);
    const nested = template.indexOf('{', i + 1);
    if (end < 0 || (nested >= 0 && nested < end)) fail(`a closing "}" for the "{" at position ${i}`);
    const placeholder = template.slice(i + 1, end);
    const path = placeholder.split('.');
    if (!IDENTIFIER.test(path[0]!) || !path.every((segment) => PATH_SEGMENT.test(segment))) {
      fail(`placeholders like {orderId} or {dto.order.id}; {${placeholder}} is not a parameter path`);
    }
    if (text) parts.push({ text });
    text = '';
    parts.push({ placeholder, parameter: -1, path });
    i = end;
  }
  if (text) parts.push({ text });
  return parts;
}

function valueAt(part: PlaceholderPart, args: readonly unknown[], describe: () => string): string {
  let value: unknown = part.rest ? args.slice(part.parameter) : args[part.parameter];
  for (let depth = 1; depth < part.path.length; depth++) {
    if (value === undefined || value === null) {
      throw new LockKeyError(`${describe()} cannot be read: ${part.path.slice(0, depth).join('.')} is ${value}.`);
    }
    value = (value as Record<string, unknown>)[part.path[depth]!];
  }
  return segmentText(value, describe);
}

function describeSignature(target: KeyTemplateTarget): string {
  const method = target.label.slice(target.label.lastIndexOf('.') + 1);
  const names = (target.parameterNames ?? []).map((name) => name ?? '<destructured>');
  return `${method}(${names.join(', ')})`;
}

function separatorHint(left: string, right: string): string {
  return (
    `placeholders separated by a character such as ":" or "/"; between {${left}} and {${right}} there is none ` +
    '(values may contain letters, digits, "_", "." and "-", so those cannot separate them)'
  );
}
