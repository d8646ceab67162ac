/**
 * Reads a function's parameter names from its source text (`Function.prototype.toString`), which is how key
 * templates learn that `{orderId}` is the first argument.
 *
 * What this relies on and where it stops:
 * - TypeScript (tsc, ts-jest, SWC, esbuild, Babel) keeps parameter names when it compiles, for every target,
 *   so decorated methods read back as written. Decorators are compiled away and do not disturb the text.
 * - A minifier that mangles names (terser/uglify `mangle`) renames parameters: templates then fail at
 *   startup because `{orderId}` names no parameter, never silently at run time. Keep parameter names for the
 *   server bundle, or use the function form `key: (orderId: string) => ...`, which reads no source.
 * - Native, bound and proxied functions have no readable source: the result is `undefined`.
 * - A destructured parameter (`{ id }`, `[first]`) has no name: its position is `undefined`.
 * - A rest parameter is reported with its dots (`...ids`): it stands for the array of the remaining
 *   arguments, not for the argument at its position.
 * - Default values may contain anything except a regular-expression literal with unbalanced brackets.
 *
 * @returns names by position, or `undefined` when the source cannot be read.
 */
export function parameterNames(fn: (...args: never[]) => unknown): (string | undefined)[] | undefined {
  let source: string;
  try {
    source = Function.prototype.toString.call(fn);
  } catch {
    return undefined;
  }
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) return undefined;
  const code = blankOutLiterals(source);
  const list = parameterList(code);
  if (list === undefined) return undefined;
  return splitTopLevel(list)
    .map((parameter) => parameter.trim())
    .filter((parameter, index, all) => parameter.length > 0 || index < all.length - 1)
    .map((parameter) => {
      const rest = /^\.\.\./.test(parameter);
      const name = IDENTIFIER_START.exec(parameter.replace(/^\.\.\./, '').trim())?.[0];
      return name && rest ? `...${name}` : name;
    });
}

const IDENTIFIER_START = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*/u;
const OPENING: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * The same text with comments replaced by spaces and the contents of string and template literals removed,
 * so brackets and commas inside them no longer count.
 */
function blankOutLiterals(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    const next = source[i + 1];
    if (char === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
      out += ' ';
    } else if (char === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
      out += ' ';
    } else if (char === '"' || char === "'") {
      i = skipQuoted(source, i, char);
      out += `${char}${char}`;
    } else if (char === '`') {
      i = skipTemplate(source, i);
      out += '``';
    } else {
      out += char;
      i++;
    }
  }
  return out;
}

function skipQuoted(source: string, start: number, quote: string): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === quote) return i + 1;
  }
  return source.length;
}

/** Skips a template literal, including `${...}` substitutions that may hold strings and templates. */
function skipTemplate(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    const char = source[i];
    if (char === '\\') i++;
    else if (char === '`') return i + 1;
    else if (char === '$' && source[i + 1] === '{') {
      let depth = 1;
      i += 2;
      while (i < source.length && depth > 0) {
        const inner = source[i]!;
        if (inner === '"' || inner === "'") i = skipQuoted(source, i, inner) - 1;
        else if (inner === '`') i = skipTemplate(source, i) - 1;
        else if (inner === '{') depth++;
        else if (inner === '}') depth--;
        i++;
      }
      i--;
    }
  }
  return source.length;
}

/** The text between the parentheses of the parameter list (or the lone parameter of `x => ...`). */
function parameterList(code: string): string | undefined {
  let squareDepth = 0;
  for (let i = 0; i < code.length; i++) {
    const char = code[i]!;
    if (char === '[') squareDepth++;
    else if (char === ']') squareDepth--;
    else if (squareDepth === 0 && char === '=' && code[i + 1] === '>') {
      // `x => ...` or `async x => ...`: a single unparenthesised parameter.
      return code.slice(0, i).trim().replace(/^async\s+/, '');
    } else if (squareDepth === 0 && char === '(') {
      const end = matchingBracket(code, i);
      return end === undefined ? undefined : code.slice(i + 1, end);
    }
  }
  return undefined;
}

function matchingBracket(code: string, open: number): number | undefined {
  const stack: string[] = [];
  for (let i = open; i < code.length; i++) {
    const char = code[i]!;
    if (OPENING[char]) stack.push(OPENING[char]!);
    else if (char === ')' || char === ']' || char === '}') {
      if (stack.pop() !== char) return undefined;
      if (stack.length === 0) return i;
    }
  }
  return undefined;
}

function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of list) {
    if (OPENING[char]) depth++;
    else if (char === ')' || char === ']' || char === '}') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}
